import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCommunity, createCreator, createTier, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { subscribedMember } from '../../../test/challenges-kit.js';
import { mirrorSubscription, placeIn } from '../../../test/members-kit.js';
import { asMember, createPost, creatorPost, feedOf, patchPost, postPost } from '../../../test/posts-kit.js';

/** The creator's posts: validation, rendering, listing order and filters, edits, polls under votes, deletion, comments moderation. */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const list = async (creator: TestCreator, query = '') => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/posts${query}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { data: Array<Record<string, any>>; pagination: Record<string, number> };
};
const detailsOf = (res: Parameters<typeof json>[0]) => (json(res).error.details as Array<{ field: string; message: string }>).map((d) => d.field);
const del = (creator: TestCreator, url: string) => t.app.inject({ method: 'DELETE', url: `/api/v1${url}`, headers: creator.headers });

describe('writing a post', () => {
  it('stores the markdown as written and answers its sanitised HTML, preview and zero counts', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const content = '## Leg day\n\nDo **5×5** squats. <b>raw</b> [plan](https://example.com/plan)';
    const post = await createPost(t, creator, { community_id: community.id, content });
    expect(post).toMatchObject({ community_id: community.id, content, tier_min_id: null, media: [], pinned: false, poll: null, kudos_count: 0, comments_count: 0, views_count: 0 });
    expect(post.content_html).toContain('<strong>5×5</strong>');
    expect(post.content_html).toContain('href="https://example.com/plan"');
    expect(post.content_html).not.toMatch(/<b>/);
    // Under 60 characters of text: members without access read none of it.
    expect(post.preview).toBeNull();
    expect(post.preview_is_custom).toBe(false);
    expect(await creatorPost(t, creator, post.id)).toEqual(post);
  });

  it('counts content in code points after NFC: 4000 emoji or decomposed letters pass, 4001 fail', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    for (const unit of ['😀', 'e\u0301', 'ã', 'a']) {
      expect((await postPost(t, creator, { community_id: community.id, content: unit.repeat(4000) })).statusCode, `${unit} × 4000`).toBe(201);
      const over = await postPost(t, creator, { community_id: community.id, content: unit.repeat(4001) });
      expect(over.statusCode, `${unit} × 4001`).toBe(400);
      expect(json(over).error.details).toEqual([{ field: 'content', message: 'must be at most 4000 characters (this one has 4001)' }]);
    }
  });

  it('refuses blank content, a bad media URL and a bad poll, naming every field at once', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const res = await postPost(t, creator, {
      community_id: community.id,
      content: '   \n ',
      media: [
        { type: 'image', url: 'https://cdn.example.com/ok.jpg' },
        { type: 'image', url: 'http://cdn.example.com/a.jpg' },
        { type: 'video', url: 'https://user:pw@cdn.example.com/v.mp4' },
        { type: 'audio', url: 'https://127.0.0.1/a.mp3' },
        { type: 'image', url: 'https://192.168.1.20/a.jpg' },
      ],
      poll: { question: 'Best lift?', options: ['Squat', ' squat '], closes_at: '2001-01-01T00:00:00Z' },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(detailsOf(res).sort()).toEqual(['content', 'media.1.url', 'media.2.url', 'media.3.url', 'media.4.url', 'poll.closes_at', 'poll.options'].sort());
  });

  it('refuses a leap second as a closing time, stores media addresses as the URL parser reads them, and keeps poll settings an edit leaves out', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const leap = await postPost(t, creator, { community_id: community.id, poll: { question: 'Q', options: ['a', 'b'], closes_at: '2030-06-30T23:59:60Z' } });
    expect(leap.statusCode).toBe(400);
    expect(detailsOf(leap)).toContain('poll.closes_at');
    const closesAt = '2030-06-30T12:00:00.000Z';
    const post = await createPost(t, creator, {
      community_id: community.id,
      media: [{ type: 'image', url: 'https://CDN.Example.com/a b.jpg' }],
      poll: { question: 'Q', options: ['a', 'b'], closes_at: closesAt, multiple_choice: true },
    });
    expect(post.media).toEqual([{ type: 'image', url: 'https://cdn.example.com/a%20b.jpg' }]);
    const edited = json(await patchPost(t, creator, post.id, { poll: { question: 'Q, again', options: ['a', 'b'] } })).data;
    expect(edited.poll).toMatchObject({ question: 'Q, again', closes_at: closesAt, multiple_choice: true });
  });

  it('refuses more than ten media, a poll of one option and an unknown media type by schema', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const media = Array.from({ length: 11 }, (_, i) => ({ type: 'image', url: `https://cdn.example.com/${i}.jpg` }));
    expect((await postPost(t, creator, { community_id: community.id, media })).statusCode).toBe(400);
    expect((await postPost(t, creator, { community_id: community.id, poll: { question: 'Q', options: ['only'] } })).statusCode).toBe(400);
    expect((await postPost(t, creator, { community_id: community.id, media: [{ type: 'pdf', url: 'https://cdn.example.com/a.pdf' }] })).statusCode).toBe(400);
  });

  it("answers 404 for another creator's community and 400 for a tier of another community", async () => {
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const theirs = await createCommunity(t, other);
    expect((await postPost(t, creator, { community_id: theirs.id })).statusCode).toBe(404);
    const mine = await createCommunity(t, creator);
    const elsewhere = await placeIn(t, creator);
    const res = await postPost(t, creator, { community_id: mine.id, tier_min_id: elsewhere.tierId });
    expect(res.statusCode).toBe(400);
    expect(detailsOf(res)).toEqual(['tier_min_id']);
  });

  it('takes a deactivated tier as the minimum: old posts for a retired plan stay possible', async () => {
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    expect((await del(creator, `/tiers/${place.tierId}`)).statusCode).toBe(200);
    expect((await createPost(t, creator, { community_id: place.communityId, tier_min_id: place.tierId })).tier_min_id).toBe(place.tierId);
  });
});

describe('listing posts', () => {
  it('lists pinned posts first, then newest, with filters and exact totals', async () => {
    const creator = await createCreator(t);
    const a = await createCommunity(t, creator);
    const b = await createCommunity(t, creator);
    const tier = await createTier(t, creator, a.id);
    const first = await createPost(t, creator, { community_id: a.id, content: 'first' });
    const pinned = await createPost(t, creator, { community_id: a.id, content: 'pinned', pinned: true });
    const third = await createPost(t, creator, { community_id: a.id, content: 'third', tier_min_id: tier.id });
    const elsewhere = await createPost(t, creator, { community_id: b.id, content: 'other community' });
    const all = await list(creator);
    expect(all.data.map((p) => p.id)).toEqual([pinned.id, elsewhere.id, third.id, first.id]);
    expect(all.pagination).toEqual({ page: 1, limit: 20, total: 4, pages: 1 });
    expect((await list(creator, `?community_id=${a.id}`)).data.map((p) => p.id)).toEqual([pinned.id, third.id, first.id]);
    expect((await list(creator, `?community_id=${a.id}&limit=2&page=2`)).data.map((p) => p.id)).toEqual([first.id]);
    const unpinned = await list(creator, '?pinned=false');
    expect(unpinned.pagination.total).toBe(3);
    expect((await list(creator, `?tier_min_id=${tier.id}`)).data.map((p) => p.id)).toEqual([third.id]);
    const other = await createCreator(t);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/posts?community_id=${a.id}`, headers: other.headers })).statusCode).toBe(404);
    expect((await list(other)).data).toEqual([]);
  });
});

describe('editing a post', () => {
  it('changes what is sent, re-renders edited content and can go back to the automatic preview', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const post = await createPost(t, creator, { community_id: community.id, content: 'old *text*', preview: 'Members only: the full plan' });
    expect(post).toMatchObject({ preview: 'Members only: the full plan', preview_is_custom: true });
    const content = 'new **text**, long enough that its first third makes a teaser for members';
    const res = await patchPost(t, creator, post.id, { content, pinned: true });
    expect(res.statusCode, res.body).toBe(200);
    const edited = json(res).data;
    expect(edited).toMatchObject({ content, pinned: true, preview: 'Members only: the full plan' });
    expect(edited.content_html).toContain('<strong>text</strong>');
    const reverted = json(await patchPost(t, creator, post.id, { preview: null })).data;
    // 69 characters of text: at most 23 of them, cut at a word.
    expect(reverted).toMatchObject({ preview: 'new text, long enough…', preview_is_custom: false });
    const empty = await patchPost(t, creator, post.id, {});
    expect(json(empty).data.updated_at).toBe(reverted.updated_at);
    expect((await patchPost(t, creator, post.id, { content: 'x'.repeat(4001) })).statusCode).toBe(400);
  });

  it('fixes a poll once anyone has voted: options, mode and removal are 409, the question may change', async () => {
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const poll = { question: 'Which split?', options: ['PPL', 'Upper/Lower'] };
    const post = await createPost(t, creator, { community_id: place.communityId, poll });
    // Before any vote, anything goes.
    const reshaped = json(await patchPost(t, creator, post.id, { poll: { ...poll, options: ['PPL', 'Upper/Lower', 'Full body'] } })).data;
    expect(reshaped.poll.options.map((o: { text: string }) => o.text)).toEqual(['PPL', 'Upper/Lower', 'Full body']);
    const member = await subscribedMember(t, creator, place);
    expect((await asMember(t, member, 'POST', `/posts/${post.id}/poll-votes`, { options: [2] })).statusCode).toBe(200);
    const three = ['PPL', 'Upper/Lower', 'Full body'];
    expect((await patchPost(t, creator, post.id, { poll: { question: 'Which split?', options: ['PPL', 'Bro split'] } })).statusCode).toBe(409);
    expect((await patchPost(t, creator, post.id, { poll: { question: 'Which split?', options: three, multiple_choice: true } })).statusCode).toBe(409);
    expect((await patchPost(t, creator, post.id, { poll: null })).statusCode).toBe(409);
    const renamed = await patchPost(t, creator, post.id, { poll: { question: 'Your split?', options: three } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(json(renamed).data.poll).toMatchObject({ question: 'Your split?', voters: 1, options: [{ votes: 0 }, { votes: 0 }, { index: 2, text: 'Full body', votes: 1 }] });
  });
});

describe('deleting', () => {
  it('takes a post out of every feed and answers 404 after, also to its member and on a second delete', async () => {
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const post = await createPost(t, creator, { community_id: place.communityId });
    const member = await subscribedMember(t, creator, place);
    expect((await feedOf(t, member)).data).toHaveLength(1);
    const res = await del(creator, `/posts/${post.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).data).toEqual({ id: post.id, deleted: true });
    expect((await del(creator, `/posts/${post.id}`)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/posts/${post.id}`, headers: creator.headers })).statusCode).toBe(404);
    expect((await list(creator)).pagination.total).toBe(0);
    const feed = await feedOf(t, member);
    expect(feed.data).toEqual([]);
    expect(feed.pagination.total).toBe(0);
    expect((await asMember(t, member, 'GET', `/posts/${post.id}`)).statusCode).toBe(404);
  });

  it('counts in the feed’s total the posts not deleted of the communities the member may read, and only those', async () => {
    const creator = await createCreator(t);
    const [a, b, closed] = [await placeIn(t, creator), await placeIn(t, creator), await placeIn(t, creator)];
    const member = await subscribedMember(t, creator, a);
    await mirrorSubscription(t, creator, { ...b, memberId: member.id }, { status: 'active' });
    const gone = await createPost(t, creator, { community_id: a.communityId });
    await createPost(t, creator, { community_id: a.communityId });
    for (let i = 0; i < 3; i++) await createPost(t, creator, { community_id: b.communityId });
    // A community the member holds nothing in and cannot read.
    expect((await t.app.inject({ method: 'PATCH', url: `/api/v1/communities/${closed.communityId}`, headers: creator.headers, payload: { is_public: false } })).statusCode).toBe(200);
    await createPost(t, creator, { community_id: closed.communityId });
    expect((await del(creator, `/posts/${gone.id}`)).statusCode).toBe(200);
    const page = await feedOf(t, member, '?limit=2');
    expect(page.data).toHaveLength(2);
    expect(page.pagination).toEqual({ page: 1, limit: 2, total: 4, pages: 2 });
    expect((await feedOf(t, member, `?community_id=${a.communityId}`)).pagination.total).toBe(1);
    expect((await feedOf(t, member, `?community_id=${b.communityId}`)).pagination.total).toBe(3);
  });

  it('lets the creator read and delete any comment of their post, and no one else', async () => {
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const post = await createPost(t, creator, { community_id: place.communityId });
    const member = await subscribedMember(t, creator, place, { name: 'Ana Beatriz Costa' });
    const comment = json(await asMember(t, member, 'POST', `/posts/${post.id}/comments`, { body: 'Done: 5×5 at 80 kg' })).data;
    const comments = json(await t.app.inject({ method: 'GET', url: `/api/v1/posts/${post.id}/comments`, headers: creator.headers }));
    expect(comments.data).toEqual([{ id: comment.id, post_id: post.id, member_id: member.id, author_name: 'Ana Beatriz Costa', body: 'Done: 5×5 at 80 kg', created_at: comment.created_at }]);
    const other = await createCreator(t);
    expect((await del(other, `/posts/${post.id}/comments/${comment.id}`)).statusCode).toBe(404);
    expect((await del(creator, `/posts/${post.id}/comments/${comment.id}`)).statusCode).toBe(200);
    expect((await del(creator, `/posts/${post.id}/comments/${comment.id}`)).statusCode).toBe(404);
    expect((await creatorPost(t, creator, post.id)).comments_count).toBe(0);
  });

  it("answers 404 for another creator's post on every route", async () => {
    const owner = await createCreator(t);
    const post = await createPost(t, owner, { community_id: (await createCommunity(t, owner)).id });
    const intruder = await createCreator(t);
    const as = (method: 'GET' | 'PATCH' | 'DELETE', url: string, payload?: object) => t.app.inject({ method, url: `/api/v1${url}`, headers: intruder.headers, ...(payload ? { payload } : {}) });
    expect((await as('GET', `/posts/${post.id}`)).statusCode).toBe(404);
    expect((await as('PATCH', `/posts/${post.id}`, { pinned: true })).statusCode).toBe(404);
    expect((await as('DELETE', `/posts/${post.id}`)).statusCode).toBe(404);
    expect((await as('GET', `/posts/${post.id}/comments`)).statusCode).toBe(404);
    expect((await creatorPost(t, owner, post.id)).pinned).toBe(false);
  });
});
