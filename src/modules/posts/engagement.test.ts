import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, createMember, createTier, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { DAY_MS, getMemberRecord, placeIn, type Place } from '../../../test/members-kit.js';
import { asMember, createPost, creatorPost, crowd, readPost } from '../../../test/posts-kit.js';

/** Members' engagement: kudos, comments, poll votes and views, their exact counts under concurrency, and activity. */
let clock = new Date('2026-05-04T10:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

async function community(creator: TestCreator, n: number, status: 'active' | 'canceled' = 'active') {
  const place = await placeIn(t, creator);
  return { place, members: await crowd(t, creator, place, n, status) };
}
const poll = (place: Place, extra: Record<string, unknown> = {}) => ({ community_id: place.communityId, poll: { question: 'Which day?', options: ['Mon', 'Wed', 'Fri'], ...extra } });

describe('kudos', () => {
  it('gives kudos once (201, then 200 unchanged) and takes it back', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 1);
    const post = await createPost(t, creator, { community_id: place.communityId });
    const [m] = members;
    const first = await asMember(t, m!, 'POST', `/posts/${post.id}/kudos`);
    expect(first.statusCode, first.body).toBe(201);
    expect(json(first).data).toEqual({ post_id: post.id, kudoed: true, kudos_count: 1 });
    const again = await asMember(t, m!, 'POST', `/posts/${post.id}/kudos`);
    expect(again.statusCode).toBe(200);
    expect(json(again).data.kudos_count).toBe(1);
    expect((await readPost(t, m!, post.id)).kudoed).toBe(true);
    expect(json(await asMember(t, m!, 'DELETE', `/posts/${post.id}/kudos`)).data).toEqual({ post_id: post.id, kudoed: false, kudos_count: 0 });
    expect(json(await asMember(t, m!, 'DELETE', `/posts/${post.id}/kudos`)).data.kudos_count).toBe(0);
  });

  it('keeps the count exact through 50 concurrent kudos and take-backs on one post', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 50);
    const post = await createPost(t, creator, { community_id: place.communityId });
    const answers = await Promise.all(members.map((m) => asMember(t, m, 'POST', `/posts/${post.id}/kudos`)));
    expect(answers.map((r) => r.statusCode)).toEqual(members.map(() => 201));
    expect((await creatorPost(t, creator, post.id)).kudos_count).toBe(50);
    // Half take theirs back while the other half give theirs again, all at once.
    const toggles = await Promise.all(members.map((m, i) => asMember(t, m, i % 2 ? 'DELETE' : 'POST', `/posts/${post.id}/kudos`)));
    expect(toggles.every((r) => r.statusCode === 200)).toBe(true);
    expect((await creatorPost(t, creator, post.id)).kudos_count).toBe(25);
    const rows = await t.database.db.selectFrom('post_kudos').select((eb) => eb.fn.countAll<number>().as('n')).where('post_id', '=', post.id).executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(25);
  });

  it('is for members: a canceled subscriber reads a public post but cannot give kudos, comment or vote', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 1, 'canceled');
    const post = await createPost(t, creator, poll(place));
    expect((await readPost(t, members[0]!, post.id)).locked).toBe(false);
    for (const [method, url, body] of [
      ['POST', '/kudos', undefined],
      ['POST', '/comments', { body: 'hi' }],
      ['POST', '/poll-votes', { options: [0] }],
    ] as const) {
      const res = await asMember(t, members[0]!, method, `/posts/${post.id}${url}`, body);
      expect(res.statusCode, url).toBe(403);
    }
  });
});

describe('views', () => {
  it('counts 50 concurrent readers once each, again the next UTC day, and the reader sees their own view', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 50);
    const post = await createPost(t, creator, { community_id: place.communityId });
    const seen = await Promise.all(members.map((m) => readPost(t, m, post.id)));
    expect(seen.every((p) => p.views_count >= 1)).toBe(true);
    expect((await creatorPost(t, creator, post.id)).views_count).toBe(50);
    await Promise.all(members.map((m) => readPost(t, m, post.id)));
    expect((await creatorPost(t, creator, post.id)).views_count).toBe(50);
    clock = new Date(clock.getTime() + DAY_MS);
    const again = await readPost(t, members[0]!, post.id);
    expect(again.views_count).toBe(51);
  });
});

describe('views of posts opened together', () => {
  it('count where the member may see the post, locked or not, and never where the answer is 404', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 1);
    const [member] = members;
    const stranger = await createMember(t);
    const open = await createPost(t, creator, { community_id: place.communityId });
    const locked = await createPost(t, creator, { community_id: place.communityId, tier_min_id: (await createTier(t, creator, place.communityId, { name: 'Gold', price_cents: 9900 })).id });
    // Private: its posts are not revealed to someone who never subscribed.
    const hidden = await placeIn(t, creator, 'Inner');
    const patched = await t.app.inject({ method: 'PATCH', url: `/api/v1/communities/${hidden.communityId}`, headers: creator.headers, payload: { is_public: false } });
    expect(patched.statusCode, patched.body).toBe(200);
    const secret = await createPost(t, creator, { community_id: hidden.communityId });
    const answers = await Promise.all([
      asMember(t, member!, 'GET', `/posts/${open.id}`),
      asMember(t, stranger, 'GET', `/posts/${open.id}`),
      asMember(t, stranger, 'GET', `/posts/${secret.id}`),
      asMember(t, stranger, 'GET', `/posts/${locked.id}`),
    ]);
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 404, 200]);
    expect(json(answers[3]!).data.locked).toBe(true);
    // Each reader's answer counts their own view (a prospect of a public community is counted too).
    expect(json(answers[0]!).data.views_count).toBeGreaterThanOrEqual(1);
    expect((await creatorPost(t, creator, open.id)).views_count).toBe(2);
    expect((await creatorPost(t, creator, locked.id)).views_count).toBe(1);
    expect((await creatorPost(t, creator, secret.id)).views_count).toBe(0);
    const rows = await t.database.db.selectFrom('post_views').select(['post_id', 'member_id']).where('creator_id', '=', creator.id).execute();
    expect(rows).toHaveLength(3);
    expect(rows.some((r) => r.post_id === secret.id)).toBe(false);
  });
});

describe('comments', () => {
  it('takes 1 to 2000 characters counted after NFC, lists oldest first with short names, and deletes only your own', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 2);
    const [ana, bruno] = members;
    const post = await createPost(t, creator, { community_id: place.communityId });
    const url = `/posts/${post.id}/comments`;
    expect((await asMember(t, ana!, 'POST', url, { body: '😀'.repeat(2001) })).statusCode).toBe(400);
    expect((await asMember(t, ana!, 'POST', url, { body: ' \n\t ' })).statusCode).toBe(400);
    const long = await asMember(t, ana!, 'POST', url, { body: 'e\u0301'.repeat(2000) });
    expect(long.statusCode, long.body).toBe(201);
    expect(json(long).data.body).toBe('e\u0301'.repeat(2000));
    clock = new Date(clock.getTime() + 1000);
    const reply = json(await asMember(t, bruno!, 'POST', url, { body: 'Nice <b>work</b>' })).data;
    const page = json(await asMember(t, ana!, 'GET', url));
    expect(page.data.map((c: { author_name: string; mine: boolean }) => [c.author_name, c.mine])).toEqual([
      ['Member S.', true],
      ['Member S.', false],
    ]);
    expect(page.data[1].body).toBe('Nice <b>work</b>');
    expect(page.pagination.total).toBe(2);
    expect((await asMember(t, ana!, 'DELETE', `${url}/${reply.id}`)).statusCode).toBe(403);
    expect((await asMember(t, bruno!, 'DELETE', `${url}/${reply.id}`)).statusCode).toBe(200);
    expect((await creatorPost(t, creator, post.id)).comments_count).toBe(1);
  });
});

describe('poll votes', () => {
  it('takes one choice, replaces it on a new vote, and counts voters once', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 2);
    const post = await createPost(t, creator, poll(place));
    const vote = (i: number, options: number[]) => asMember(t, members[i]!, 'POST', `/posts/${post.id}/poll-votes`, { options });
    expect((await vote(0, [0, 1])).statusCode).toBe(400);
    expect((await vote(0, [3])).statusCode).toBe(400);
    expect(json(await vote(0, [0])).data.poll).toMatchObject({ voters: 1, my_votes: [0], options: [{ votes: 1 }, { votes: 0 }, { votes: 0 }] });
    await vote(1, [0]);
    const changed = json(await vote(0, [2])).data.poll;
    expect(changed).toMatchObject({ voters: 2, my_votes: [2], options: [{ votes: 1 }, { votes: 0 }, { votes: 1 }] });
  });

  it('takes several choices in a multiple-choice poll and none after it closes (409)', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 1);
    const closesAt = new Date(clock.getTime() + 3600_000).toISOString();
    const post = await createPost(t, creator, poll(place, { multiple_choice: true, closes_at: closesAt }));
    const vote = (options: number[]) => asMember(t, members[0]!, 'POST', `/posts/${post.id}/poll-votes`, { options });
    expect(json(await vote([0, 2])).data.poll).toMatchObject({ voters: 1, my_votes: [0, 2], options: [{ votes: 1 }, { votes: 0 }, { votes: 1 }], closed: false });
    clock = new Date(clock.getTime() + 3600_000);
    const late = await vote([1]);
    expect(late.statusCode).toBe(409);
    expect(json(late).error.message).toContain(closesAt);
    expect((await readPost(t, members[0]!, post.id)).poll).toMatchObject({ closed: true, my_votes: [0, 2] });
    const plain = await createPost(t, creator, { community_id: place.communityId });
    expect((await asMember(t, members[0]!, 'POST', `/posts/${plain.id}/poll-votes`, { options: [0] })).statusCode).toBe(409);
  });
});

describe('votes racing an edit of the poll', () => {
  it('never leaves a vote on an option the poll no longer has, nor counts that disagree with the votes', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 6);
    const post = await createPost(t, creator, poll(place));
    for (let round = 0; round < 6; round++) {
      const options = round % 2 ? ['Mon', 'Wed', 'Fri'] : ['Tue', 'Thu'];
      await Promise.all([
        asMember(t, members[round]!, 'POST', `/posts/${post.id}/poll-votes`, { options: [2] }),
        t.app.inject({ method: 'PATCH', url: `/api/v1/posts/${post.id}`, headers: creator.headers, payload: { poll: { question: 'Which day?', options } } }),
      ]);
    }
    const stored = await t.database.db.selectFrom('posts').select('poll_options').where('id', '=', post.id).executeTakeFirstOrThrow();
    const counts = await t.database.db.selectFrom('post_counts').select(['poll_votes', 'poll_voters']).where('post_id', '=', post.id).executeTakeFirstOrThrow();
    const votes = await t.database.db.selectFrom('poll_votes').select(['member_id', 'option']).where('post_id', '=', post.id).execute();
    const n = stored.poll_options!.length;
    expect(votes.every((v) => v.option < n)).toBe(true);
    expect(counts.poll_votes).toEqual(Array.from({ length: n }, (_, i) => votes.filter((v) => v.option === i).length));
    expect(counts.poll_voters).toBe(new Set(votes.map((v) => v.member_id)).size);
  });
});

describe('activity', () => {
  it('makes kudos, comments, votes and views activity in the member directory, and counts comments in posts_count_30d', async () => {
    const creator = await createCreator(t);
    const { place, members } = await community(creator, 4);
    const post = await createPost(t, creator, poll(place));
    const engagementOf = async (memberId: string) => json(await getMemberRecord(t, creator, memberId)).data.engagement as Record<string, unknown>;
    expect((await engagementOf(members[0]!.id)).last_active_at).toBeNull();
    await asMember(t, members[0]!, 'POST', `/posts/${post.id}/kudos`);
    await asMember(t, members[1]!, 'POST', `/posts/${post.id}/comments`, { body: 'In!' });
    await asMember(t, members[1]!, 'POST', `/posts/${post.id}/comments`, { body: 'Still in!' });
    await asMember(t, members[2]!, 'POST', `/posts/${post.id}/poll-votes`, { options: [1] });
    await readPost(t, members[3]!, post.id);
    for (const m of members) expect((await engagementOf(m.id)).last_active_at, m.id).toBe(clock.toISOString());
    expect((await engagementOf(members[1]!.id)).posts_count_30d).toBe(2);
    // A deleted post's comments stop counting.
    await t.app.inject({ method: 'DELETE', url: `/api/v1/posts/${post.id}`, headers: creator.headers });
    expect((await engagementOf(members[1]!.id)).posts_count_30d).toBe(0);
  });
});
