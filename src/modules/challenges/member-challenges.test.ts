import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { createChallenge, joinChallenge, joined, leaderboard, subscribedMember } from '../../../test/challenges-kit.js';
import { DAY_MS, getMemberRecord, logWorkout, mirrorSubscription, placeIn } from '../../../test/members-kit.js';

/** The member app's challenges: tier gating in the tier order, joining and leaving, the list, the board with `me`, the member record. */
const START = new Date('2026-03-10T12:00:00Z');
let clock = START;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const inDays = (days: number) => new Date(clock.getTime() + days * DAY_MS);
const asMember = (member: TestMember, method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url: `/api/v1/member${url}`, headers: { ...member.headers, ...headers } });
const leave = (member: TestMember, id: string) => asMember(member, 'POST', `/challenges/${id}/leave`);
const mine = async (member: TestMember, query = '') => {
  const res = await asMember(member, 'GET', `/challenges${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { data: Array<Record<string, any>>; pagination: Record<string, number> };
};
const running = (creator: TestCreator, place: { communityId: string }, extra: { tier_min_id?: string; name?: string } = {}) =>
  createChallenge(t, creator, { community_id: place.communityId, starts_at: inDays(-1), ...extra });
const logs = async (member: TestMember, n: number) => {
  for (let i = 0; i < n; i++) await logWorkout(t, member, { performedAt: new Date(clock.getTime() - (n - i) * 60_000) });
};

/** A community with tiers created in this order, each `[name, price_cents, billing_period]`. */
async function tiered(creator: TestCreator, specs: Array<[string, number, string]>) {
  const community = await createCommunity(t, creator);
  const tiers: Record<string, string> = {};
  for (const [name, price_cents, billing_period] of specs) tiers[name] = (await createTier(t, creator, community.id, { name, price_cents, billing_period })).id;
  return { communityId: community.id, tiers };
}

/**
 * A running challenge per tier named in `minimums` (that tier its minimum), then the join answer
 * of a member on each tier for each of them; `can_join` in the member's list agrees, and a 403 names the tier.
 */
async function joinCodes(creator: TestCreator, communityId: string, holders: Record<string, string>, minimums: string[]) {
  const challenges: Record<string, string> = {};
  for (const name of minimums) challenges[name] = (await running(creator, { communityId }, { tier_min_id: holders[name] })).id;
  const out: Record<string, Record<string, number>> = {};
  for (const [holder, tierId] of Object.entries(holders)) {
    const member = await subscribedMember(t, creator, { communityId, tierId });
    const canJoin = new Map((await mine(member)).data.map((c) => [c.id, c.can_join]));
    out[holder] = {};
    for (const [name, id] of Object.entries(challenges)) {
      const res = await joinChallenge(t, member, id);
      out[holder][name] = res.statusCode;
      expect(canJoin.get(id), `${holder} can_join ${name}`).toBe(res.statusCode === 200);
      if (res.statusCode === 403) expect(json(res).error).toMatchObject({ code: 'forbidden', message: expect.stringContaining(`"${name}"`) });
    }
  }
  return out;
}

describe('tier gating in the tier order', () => {
  it('ranks tiers by monthly-normalised price without levels, a price tie going to the later tier', async () => {
    clock = START;
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Annual', 12000, 'yearly'], ['Pro', 2000, 'monthly'], ['Lite', 2700, 'quarterly']]);
    // 12,000 a year = 1,000 a month exactly: tied with Basic, then ranked by creation (DESIGN §7); Lite is 900 a month.
    expect(await joinCodes(creator, communityId, tiers, ['Basic', 'Annual'])).toEqual({
      Basic: { Basic: 200, Annual: 403 },
      Annual: { Basic: 200, Annual: 200 },
      Pro: { Basic: 200, Annual: 200 },
      Lite: { Basic: 403, Annual: 403 },
    });
  });

  it('compares by level alone once a tier has one: levels override price, equal levels qualify, no level counts as 0', async () => {
    clock = START;
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Annual', 12000, 'yearly'], ['Pro', 5000, 'monthly'], ['Starter', 500, 'monthly'], ['Elite', 9000, 'monthly']]);
    for (const [name, level] of [['Annual', 2], ['Basic', 2], ['Pro', 1]] as const) {
      const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/tiers/${tiers[name]}`, headers: creator.headers, payload: { level } });
      expect(res.statusCode, res.body).toBe(200);
    }
    expect(await joinCodes(creator, communityId, tiers, ['Annual', 'Pro', 'Elite'])).toEqual({
      Basic: { Annual: 200, Pro: 200, Elite: 200 },
      Annual: { Annual: 200, Pro: 200, Elite: 200 },
      Pro: { Annual: 403, Pro: 200, Elite: 200 },
      Starter: { Annual: 403, Pro: 403, Elite: 200 },
      Elite: { Annual: 403, Pro: 403, Elite: 200 },
    });
  });

  it('lets trialing and past-due subscriptions join, not a canceled one, and does not show the challenge to a subscriber of another community', async () => {
    clock = START;
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly']]);
    const pro = { communityId, tierId: tiers.Pro! };
    const gated = await running(creator, pro, { tier_min_id: tiers.Pro });
    const open = await running(creator, pro);
    for (const status of ['trialing', 'past_due', 'active'] as const) expect((await joinChallenge(t, await subscribedMember(t, creator, pro, { status }), gated.id)).statusCode, status).toBe(200);

    const canceled = await subscribedMember(t, creator, pro, { status: 'canceled' });
    const elsewhere = await subscribedMember(t, creator, await placeIn(t, creator, 'Pro'));
    const foreign = await subscribedMember(t, other, await placeIn(t, other, 'Pro'));
    const res = await joinChallenge(t, canceled, gated.id);
    expect(res.statusCode).toBe(403);
    expect(json(res).error.message).toContain('"Pro"');
    const unGated = await joinChallenge(t, canceled, open.id);
    expect(unGated.statusCode).toBe(403);
    expect(json(unGated).error.message).toContain('subscribe to join');
    // No relation to the community (issue #26): as if the challenge did not exist, naming no tier.
    for (const member of [elsewhere, foreign]) {
      for (const id of [gated.id, open.id]) {
        const refused = await joinChallenge(t, member, id);
        expect(refused.statusCode).toBe(404);
        expect(refused.body).not.toContain('Pro');
      }
    }
    expect(json(await t.app.inject({ method: 'GET', url: `/api/v1/challenges/${gated.id}`, headers: creator.headers })).data.participants_count).toBe(3);
  });
});

describe('joining and leaving', () => {
  it('joins once however often asked, leaves, and leaving when not in changes nothing', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const member = await subscribedMember(t, creator, place);
    const challenge = await running(creator, place);
    const first = await joined(t, member, challenge.id);
    expect(first).toMatchObject({ id: challenge.id, joined: true, can_join: true, participants_count: 1, score: 0, rank: 1, status: 'running' });
    expect(await joined(t, member, challenge.id)).toEqual(first);

    const out = await leave(member, challenge.id);
    expect(out.statusCode, out.body).toBe(200);
    expect(json(out).data).toMatchObject({ joined: false, participants_count: 0, score: null, rank: null });
    const again = await leave(member, challenge.id);
    expect(again.statusCode).toBe(200);
    expect(json(again).data).toEqual(json(out).data);
    expect((await leaderboard(t, creator, challenge.id)).pagination.total).toBe(0);
  });

  it('refuses joining and leaving once finished or canceled, and joining while the community is paused', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const member = await subscribedMember(t, creator, place);
    const ending = await createChallenge(t, creator, { community_id: place.communityId, starts_at: inDays(-1), duration_days: 2 });
    const canceled = await running(creator, place);
    await joined(t, member, ending.id);
    await joined(t, member, canceled.id);
    await t.app.inject({ method: 'POST', url: `/api/v1/challenges/${canceled.id}/cancel`, headers: creator.headers });
    clock = inDays(2);
    for (const id of [ending.id, canceled.id]) {
      for (const res of [await joinChallenge(t, member, id), await leave(member, id)]) {
        expect(res.statusCode, res.body).toBe(409);
        expect(json(res).error.code).toBe('conflict');
      }
    }
    expect((await leaderboard(t, creator, ending.id)).pagination.total).toBe(1);

    const paused = await placeIn(t, creator);
    const challenge = await running(creator, paused);
    const waiting = await subscribedMember(t, creator, paused);
    await t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${paused.communityId}`, headers: creator.headers });
    expect((await mine(waiting)).data.find((c) => c.id === challenge.id)).toMatchObject({ status: 'running', can_join: false });
    const res = await joinChallenge(t, waiting, challenge.id);
    expect(res.statusCode).toBe(409);
    expect(json(res).error.code).toBe('community_paused');
  });

  it('answers a participant joining again with the same participation even after their subscription ended', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const member = await subscribedMember(t, creator, place);
    const challenge = await running(creator, place);
    const first = await joined(t, member, challenge.id);
    const subscription = await t.database.db.selectFrom('subscriptions').select('id').where('member_id', '=', member.id).executeTakeFirstOrThrow();
    await mirrorSubscription(t, creator, { ...place, memberId: member.id, id: subscription.id }, { status: 'canceled' });
    // Still in, same score and rank; only a new join would be refused now.
    expect(await joined(t, member, challenge.id)).toEqual({ ...first, can_join: false });
  });

  it('replays a join sent with the same Idempotency-Key instead of joining again', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const member = await subscribedMember(t, creator, place);
    const challenge = await running(creator, place);
    const key = { 'idempotency-key': `join-${challenge.id}` };
    const first = await asMember(member, 'POST', `/challenges/${challenge.id}/join`, key);
    expect(first.statusCode, first.body).toBe(200);
    await leave(member, challenge.id);
    const replay = await asMember(member, 'POST', `/challenges/${challenge.id}/join`, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect((await leaderboard(t, creator, challenge.id)).pagination.total).toBe(0);
  });
});

describe('the member list', () => {
  it('lists open challenges of subscribed communities and joined ones of any status with score and rank, filtered by community', async () => {
    clock = START;
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const [a, b, unsubscribed] = [await placeIn(t, creator), await placeIn(t, creator), await placeIn(t, creator)];
    const member = await subscribedMember(t, creator, a);
    await mirrorSubscription(t, creator, { ...b, memberId: member.id }, { status: 'active' });
    const rival = await subscribedMember(t, creator, a);

    const scheduled = await createChallenge(t, creator, { community_id: a.communityId, starts_at: inDays(3) });
    const live = await running(creator, a);
    const finishedJoined = await createChallenge(t, creator, { community_id: b.communityId, starts_at: inDays(-1.2), duration_days: 2 });
    const finishedOnly = await createChallenge(t, creator, { community_id: b.communityId, starts_at: inDays(-1.2), duration_days: 2 });
    const canceled = await createChallenge(t, creator, { community_id: a.communityId, starts_at: inDays(2) });
    await t.app.inject({ method: 'POST', url: `/api/v1/challenges/${canceled.id}/cancel`, headers: creator.headers });
    await running(creator, unsubscribed);
    await running(other, await placeIn(t, other));

    await joined(t, member, live.id);
    await joined(t, rival, live.id);
    await joined(t, member, finishedJoined.id);
    await logs(member, 2);
    await logs(rival, 3);
    clock = inDays(1);

    const all = await mine(member);
    expect(all.data.map((c) => c.id)).toEqual([scheduled.id, live.id, finishedJoined.id]);
    expect(all.pagination).toMatchObject({ total: 3, page: 1 });
    expect(all.data[0]).toMatchObject({ status: 'scheduled', joined: false, can_join: true, score: null, rank: null, community_id: a.communityId });
    expect(all.data[1]).toMatchObject({ status: 'running', joined: true, can_join: true, score: 2, rank: 2, participants_count: 2 });
    expect(all.data[2]).toMatchObject({ status: 'finished', joined: true, can_join: false, score: 2, rank: 1 });
    expect(all.data.map((c) => c.id)).not.toContain(finishedOnly.id);
    expect(all.data.map((c) => c.id)).not.toContain(canceled.id);

    expect((await mine(member, `?community_id=${b.communityId}`)).data.map((c) => c.id)).toEqual([finishedJoined.id]);
    expect((await mine(member, `?community_id=${unsubscribed.communityId}`)).data).toEqual([]);
    expect((await mine(await createMember(t))).data).toEqual([]);
  });
});

describe('the member leaderboard', () => {
  it("is the creator's board in its exact shape, plus your own row even outside the page", async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const challenge = await running(creator, place);
    const names = ['Maria Silva', 'Ana Beatriz Costa', 'Cher'];
    const members: TestMember[] = [];
    for (const [i, name] of names.entries()) {
      const member = await subscribedMember(t, creator, place, { name });
      await joined(t, member, challenge.id);
      await logs(member, 3 - i);
      members.push(member);
    }
    const board = async (member: TestMember, query = '') => {
      const res = await asMember(member, 'GET', `/challenges/${challenge.id}/leaderboard${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return json(res);
    };
    const cher = await board(members[2]!);
    expect(Object.keys(cher).sort()).toEqual(['data', 'pagination', 'success']);
    expect(Object.keys(cher.data).sort()).toEqual(['challenge_id', 'me', 'rankings', 'updated_at']);
    expect(cher.data).toMatchObject({ challenge_id: challenge.id, updated_at: clock.toISOString() });
    expect(cher.pagination).toEqual({ page: 1, limit: 50, total: 3, pages: 1 });
    expect(cher.data.rankings).toEqual([
      { rank: 1, member_id: members[0]!.id, name: 'Maria S.', score: 3, delta: '+0' },
      { rank: 2, member_id: members[1]!.id, name: 'Ana C.', score: 2, delta: '+0' },
      { rank: 3, member_id: members[2]!.id, name: 'Cher', score: 1, delta: '+0' },
    ]);
    const creators = await leaderboard(t, creator, challenge.id);
    expect(Object.keys(creators.data).sort()).toEqual(['challenge_id', 'rankings', 'updated_at']);
    expect(creators.data.rankings).toEqual(cher.data.rankings);
    expect(creators.pagination).toEqual(cher.pagination);

    const top = await board(members[2]!, '?limit=1');
    expect(top.data.rankings.map((r: { member_id: string }) => r.member_id)).toEqual([members[0]!.id]);
    expect(top.data.me).toEqual(cher.data.rankings[2]);
    expect(top.pagination).toEqual({ page: 1, limit: 1, total: 3, pages: 3 });
    expect((await board(members[2]!, '?limit=1&page=2')).data.rankings).toEqual([cher.data.rankings[1]]);
  });

  it('shows me as null to a subscribed onlooker, 404 to a stranger with no relation to the community, as for an unknown challenge', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const challenge = await running(creator, place);
    await joined(t, await subscribedMember(t, creator, place), challenge.id);
    const url = `/challenges/${challenge.id}/leaderboard`;

    const onlooker = await asMember(await subscribedMember(t, creator, place), 'GET', url);
    expect(onlooker.statusCode, onlooker.body).toBe(200);
    expect(json(onlooker).data.me).toBeNull();
    expect(json(onlooker).data.rankings).toHaveLength(1);
    for (const stranger of [await createMember(t), await subscribedMember(t, creator, await placeIn(t, creator))]) {
      for (const res of [await asMember(stranger, 'GET', url), await leave(stranger, challenge.id)]) {
        expect(res.statusCode).toBe(404);
        expect(json(res).error.code).toBe('not_found');
      }
    }
    const unknown = await asMember(await createMember(t), 'GET', '/challenges/0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b/leaderboard');
    expect(unknown.statusCode).toBe(404);
    expect(json(unknown).error.code).toBe('not_found');
  });
});

describe('the member record', () => {
  it("lists the member's challenges with score and rank, each creator seeing only their own", async () => {
    clock = START;
    const [first, second] = [await createCreator(t), await createCreator(t)];
    const [here, there] = [await placeIn(t, first), await placeIn(t, second)];
    const member = await subscribedMember(t, first, here);
    await mirrorSubscription(t, second, { ...there, memberId: member.id }, { status: 'active' });
    const ours = await running(first, here, { name: 'Ours' });
    const theirs = await running(second, there, { name: 'Theirs' });
    await joined(t, member, ours.id);
    await joined(t, member, theirs.id);
    await logs(member, 2);

    const record = async (creator: TestCreator) => {
      const res = await getMemberRecord(t, creator, member.id);
      expect(res.statusCode, res.body).toBe(200);
      return json(res).data.challenges as Array<Record<string, unknown>>;
    };
    const mineFirst = await record(first);
    expect(mineFirst).toEqual([{ challenge_id: ours.id, name: 'Ours', status: 'running', score: 2, rank: 1, joined_at: START.toISOString() }]);
    expect(Object.keys(mineFirst[0]!).sort()).toEqual(['challenge_id', 'joined_at', 'name', 'rank', 'score', 'status']);
    expect(await record(second)).toEqual([{ challenge_id: theirs.id, name: 'Theirs', status: 'running', score: 2, rank: 1, joined_at: START.toISOString() }]);
  });
});
