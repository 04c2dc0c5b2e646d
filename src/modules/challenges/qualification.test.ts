import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChallenge, joinChallenge, joined, scoresOf } from '../../../test/challenges-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, mintMember, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { DAY_MS, logWorkout, mirrorSubscription, placeIn, type Place } from '../../../test/members-kit.js';
import type { SubscriptionStatus } from '../../db/types.js';

/**
 * Issue #26 item 2: challenges are for members whose subscription qualifies now. One that
 * stops qualifying (ended, not live, a tier below the minimum) stops scoring from that
 * moment; a tier-restricted board is read by qualifying members only, and is not there at
 * all for someone with nothing to do with the community.
 */
const START = new Date('2026-05-04T12:00:00Z');
let clock = START;
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(() => t.close());

const later = (minutes: number) => (clock = new Date(clock.getTime() + minutes * 60_000));
const asMember = (member: TestMember, url: string) => t.app.inject({ method: 'GET', url: `/api/v1/member${url}`, headers: member.headers });

/** A member with a subscription to `place` in `status`, written as the mirror would at the current clock; answers the member and the subscription id. */
async function member(creator: TestCreator, place: Place, status: SubscriptionStatus = 'active', name = 'Maria Silva') {
  const m = await mintMember(t, { name });
  const subscriptionId = await mirrorSubscription(t, creator, { ...place, memberId: m.id }, { status, createdAt: new Date(clock.getTime() - DAY_MS), at: clock });
  return { member: m, subscriptionId, change: (input: { status?: SubscriptionStatus; tierId?: string }) =>
    mirrorSubscription(t, creator, { ...place, tierId: input.tierId ?? place.tierId, memberId: m.id, id: subscriptionId }, { status: input.status ?? status, at: clock }) };
}

/** One workout logged now (a personal log: it counts in every challenge the member takes part in). */
async function logNow(m: TestMember) {
  later(1);
  await logWorkout(t, m, { performedAt: new Date(clock.getTime() - 30_000) });
}

async function tiered(creator: TestCreator) {
  const community = await createCommunity(t, creator);
  const basic = (await createTier(t, creator, community.id, { name: 'Basic', price_cents: 1000 })).id;
  const pro = (await createTier(t, creator, community.id, { name: 'Pro', price_cents: 3000 })).id;
  return { communityId: community.id, basic, pro };
}

describe('scoring while the subscription qualifies', () => {
  it('keeps the score of a participant whose subscription becomes unpaid, counts none of their later logs, and counts them all once they pay again', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, starts_at: new Date(clock.getTime() - DAY_MS) });
    const lapsing = await member(creator, place, 'active', 'Lapsing Member');
    const paying = await member(creator, place, 'active', 'Paying Member');
    for (const m of [lapsing, paying]) await joined(t, m.member, challenge.id);
    for (const m of [lapsing, paying]) await logNow(m.member);

    later(5);
    await lapsing.change({ status: 'unpaid' });
    for (const m of [lapsing, paying]) await logNow(m.member);
    let scores = await scoresOf(t, creator, challenge.id);
    expect(scores.get(lapsing.member.id)).toBe(1);
    expect(scores.get(paying.member.id)).toBe(2);

    // A rescore (a log deleted or back-dated, here one back-dated into the window) keeps the stop.
    later(1);
    await logWorkout(t, lapsing.member, { performedAt: new Date(START.getTime() - DAY_MS / 2) });
    expect((await scoresOf(t, creator, challenge.id)).get(lapsing.member.id)).toBe(1);

    later(5);
    await lapsing.change({ status: 'active' });
    scores = await scoresOf(t, creator, challenge.id);
    expect(scores.get(lapsing.member.id)).toBe(3);
    await logNow(lapsing.member);
    expect((await scoresOf(t, creator, challenge.id)).get(lapsing.member.id)).toBe(4);
  });

  it('stops the scoring of a participant moved below the minimum tier and of one whose subscription ended, and keeps past_due scoring', async () => {
    clock = START;
    const creator = await createCreator(t);
    const { communityId, basic, pro } = await tiered(creator);
    const challenge = await createChallenge(t, creator, { community_id: communityId, starts_at: new Date(clock.getTime() - DAY_MS), tier_min_id: pro });
    const downgraded = await member(creator, { communityId, tierId: pro }, 'active', 'Down Graded');
    const ended = await member(creator, { communityId, tierId: pro }, 'active', 'Ended Member');
    const dunning = await member(creator, { communityId, tierId: pro }, 'active', 'Dunning Member');
    for (const m of [downgraded, ended, dunning]) await joined(t, m.member, challenge.id);
    for (const m of [downgraded, ended, dunning]) await logNow(m.member);

    later(5);
    await downgraded.change({ tierId: basic });
    await ended.change({ status: 'canceled' });
    await dunning.change({ status: 'past_due' });
    for (const m of [downgraded, ended, dunning]) await logNow(m.member);
    const scores = await scoresOf(t, creator, challenge.id);
    expect([downgraded, ended, dunning].map((m) => scores.get(m.member.id))).toEqual([1, 1, 2]);
  });

  it('refuses a join to a member whose subscription is incomplete, unpaid or paused', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, starts_at: new Date(clock.getTime() - DAY_MS) });
    for (const status of ['incomplete', 'unpaid', 'paused'] as const) {
      const res = await joinChallenge(t, (await member(creator, place, status)).member, challenge.id);
      expect(res.statusCode, `${status}: ${res.body}`).toBe(403);
    }
  });
});

describe("a tier-restricted challenge's board", () => {
  it('is read by members whose live tier qualifies, refused to other members of the community, and not found — nor joinable — for anyone else', async () => {
    clock = START;
    const creator = await createCreator(t);
    const { communityId, basic, pro } = await tiered(creator);
    const challenge = await createChallenge(t, creator, { community_id: communityId, starts_at: new Date(clock.getTime() - DAY_MS), tier_min_id: pro });
    const url = `/challenges/${challenge.id}/leaderboard`;
    const qualifying = await member(creator, { communityId, tierId: pro });
    await joined(t, qualifying.member, challenge.id);
    expect((await asMember(qualifying.member, url)).statusCode).toBe(200);

    const lapsed = await member(creator, { communityId, tierId: pro });
    await joined(t, lapsed.member, challenge.id);
    await lapsed.change({ status: 'unpaid' });
    const onBasic = await member(creator, { communityId, tierId: basic });
    for (const m of [lapsed.member, onBasic.member]) {
      const res = await asMember(m, url);
      expect(res.statusCode, res.body).toBe(403);
      expect(json(res).error.code).toBe('forbidden');
    }

    // No relation to the community: a new member, and one of another community of the same creator.
    const elsewhere = await member(creator, await placeIn(t, creator, 'Gold'));
    for (const m of [await createMember(t), elsewhere.member]) {
      for (const res of [await asMember(m, url), await joinChallenge(t, m, challenge.id)]) {
        expect(res.statusCode, res.body).toBe(404);
        expect(json(res).error.code).toBe('not_found');
        expect(res.body).not.toContain('Pro');
      }
    }
  });
});
