import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChallenge, joinChallenge } from '../../../test/challenges-kit.js';
import { communityWithMember, createEndpoint, startReceiver, verified } from '../../../test/events-kit.js';
import { BENCH_PRESS_ID, buildTestApp, createCreator, json, mintMember, type TestApp } from '../../../test/helpers.js';
import { asMember, createPost } from '../../../test/posts-kit.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

describe('community events', () => {
  it('sends post.published with the teaser members without access see, never the body', async () => {
    const creator = await createCreator(t);
    const { communityId } = await communityWithMember(t, creator);
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(t, creator, { url: receiver.url, events: ['post.published'] });
    const body = `Today's session, in detail: ${'squat, hinge, press and carry; '.repeat(8)}the secret finisher is 100 burpees.`;
    const post = await createPost(t, creator, { community_id: communityId, content: body, pinned: true });
    await t.app.events.drain({ creatorIds: [creator.id] });
    const [event] = receiver.received.map((r) => verified(endpoint.secret, r));
    expect(event).toMatchObject({
      type: 'post.published',
      data: { post_id: post.id, community_id: communityId, tier_min_id: null, preview: post.preview, pinned: true, has_poll: false, media_count: 0, published_at: post.created_at },
    });
    expect(receiver.received[0]!.body).not.toContain('secret finisher');
    await receiver.close();
  });

  it("sends comment.created for a member's comment, and nothing for one refused", async () => {
    const creator = await createCreator(t);
    const { communityId, member } = await communityWithMember(t, creator);
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(t, creator, { url: receiver.url, events: ['comment.created'] });
    const post = await createPost(t, creator, { community_id: communityId });
    const res = await asMember(t, member, 'POST', `/posts/${post.id}/comments`, { body: 'Done in 14 minutes!' });
    expect(res.statusCode, res.body).toBe(201);
    const outsider = await mintMember(t);
    expect((await asMember(t, outsider, 'POST', `/posts/${post.id}/comments`, { body: 'Let me in' })).statusCode).toBeGreaterThanOrEqual(400);
    await t.app.events.drain({ creatorIds: [creator.id] });
    expect(receiver.received.map((r) => verified(endpoint.secret, r))).toEqual([
      {
        type: 'comment.created',
        timestamp: expect.any(String),
        data: { comment_id: json(res).data.id, post_id: post.id, community_id: communityId, member_id: member.id, body: 'Done in 14 minutes!', created_at: json(res).data.created_at },
      },
    ]);
    await receiver.close();
  });

  it('sends nothing for a comment whose transaction rolls back at commit, after its event was written', async () => {
    const creator = await createCreator(t);
    const { communityId, member } = await communityWithMember(t, creator);
    const receiver = await startReceiver();
    await createEndpoint(t, creator, { url: receiver.url, events: ['comment.created'] });
    const post = await createPost(t, creator, { community_id: communityId });
    // A check at commit that fails for this creator's deliveries only: the comment and its event go together.
    const db = t.database.db;
    const name = sql.raw(`refuse_${creator.id.replaceAll('-', '_')}`);
    await sql`create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'refused at commit'; end $$`.execute(db);
    await sql`create constraint trigger ${name} after insert on webhook_deliveries deferrable initially deferred
      for each row when (new.creator_id = ${sql.lit(creator.id)}::uuid) execute function ${name}()`.execute(db);
    try {
      expect((await asMember(t, member, 'POST', `/posts/${post.id}/comments`, { body: 'Lost at commit' })).statusCode).toBe(500);
    } finally {
      await sql`drop trigger ${name} on webhook_deliveries`.execute(db);
      await sql`drop function ${name}()`.execute(db);
    }
    await t.app.events.drain({ creatorIds: [creator.id] });
    expect(receiver.received).toEqual([]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from events where creator_id = ${creator.id}`.execute(db);
    expect(rows[0]!.n).toBe(0);
    await receiver.close();
  });

  it('sends challenge.joined once, however often the member joins', async () => {
    const creator = await createCreator(t);
    const { communityId, member } = await communityWithMember(t, creator);
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(t, creator, { url: receiver.url, events: ['challenge.joined'] });
    const challenge = await createChallenge(t, creator, { community_id: communityId, starts_at: new Date(Date.now() - 86_400_000) });
    for (let i = 0; i < 2; i++) expect((await joinChallenge(t, member, challenge.id)).statusCode).toBe(200);
    await t.app.events.drain({ creatorIds: [creator.id] });
    const events = receiver.received.map((r) => verified(endpoint.secret, r));
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ challenge_id: challenge.id, community_id: communityId, member_id: member.id });
    await receiver.close();
  });
});

describe('challenge.finished', () => {
  it('sends the final ranking once when a challenge ends, however many nodes look', async () => {
    const creator = await createCreator(t);
    const { communityId, member } = await communityWithMember(t, creator);
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(t, creator, { url: receiver.url, events: ['challenge.finished'] });
    const challenge = await createChallenge(t, creator, { community_id: communityId, starts_at: new Date(Date.now() - 86_400_000) });
    expect((await joinChallenge(t, member, challenge.id)).statusCode).toBe(200);
    const logged = await t.app.inject({
      method: 'POST',
      url: '/api/v1/member/workout-logs',
      headers: member.headers,
      payload: { community_id: communityId, performed_at: new Date(Date.now() - 3_600_000).toISOString(), sets: [{ exercise_id: BENCH_PRESS_ID, reps: 5, load_kg: 50 }] },
    });
    expect(logged.statusCode, logged.body).toBe(201);
    // Still running: nothing to tell. (Other test files' challenges may end meanwhile: only this one is looked at.)
    const toldAt = async () => (await t.database.db.selectFrom('challenges').select('finished_event_at').where('id', '=', challenge.id).executeTakeFirstOrThrow()).finished_event_at;
    await t.app.standings.finishEnded();
    expect(await toldAt()).toBeNull();
    // The end moved a day earlier (to a minute ago), its start with it.
    const endsAt = new Date(Date.now() - 60_000);
    await t.database.db.updateTable('challenges').set({ starts_at: new Date(endsAt.getTime() - 30 * 86_400_000), ends_at: endsAt }).where('id', '=', challenge.id).execute();
    // Two nodes at once, then again: one event.
    await Promise.all([t.app.standings.finishEnded(), t.app.standings.finishEnded()]);
    await t.app.standings.finishEnded();
    expect(await toldAt()).not.toBeNull();
    await t.app.events.drain({ creatorIds: [creator.id] });
    const events = receiver.received.map((r) => verified(endpoint.secret, r)).filter((e) => e.data.challenge_id === challenge.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ community_id: communityId, metric: 'workouts_count', participants_count: 1, ranking: [{ rank: 1, member_id: member.id, score: 1 }] });
    await receiver.close();
  });
});
