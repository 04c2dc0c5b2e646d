import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCommunity, createCreator, createTier, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { addMember, mirrorSubscription, type SubscriptionInput } from '../../../test/members-kit.js';

/** The daily metrics history: days reconstructed by hand, a job run twice, missed days filled, the range rules. */
let clock = new Date('2026-06-15T12:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const at = (iso: string) => new Date(iso);
const history = async (creator: TestCreator, query: string) => t.app.inject({ method: 'GET', url: `/api/v1/creator-metrics/history${query}`, headers: creator.headers });

/** m3 pays from 9 June until the 12th 15:00; m1 pays from the 10th; m2 trials from the 11th until the 13th 09:00, then pays. */
async function week() {
  const creator = await createCreator(t);
  const a = await createCommunity(t, creator);
  const tier = (await createTier(t, creator, a.id, { price_cents: 1000 })).id;
  const join = async (input: SubscriptionInput) => {
    const id = await addMember(t);
    return mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: id }, { priceCents: 1000, ...input });
  };
  await join({ status: 'canceled', createdAt: at('2026-06-09T08:00:00Z'), endedAt: at('2026-06-12T15:00:00Z') });
  await join({ status: 'active', createdAt: at('2026-06-10T10:00:00Z') });
  const m2 = await join({ status: 'active', createdAt: at('2026-06-11T09:00:00Z') });
  await sql`update subscriptions set trial_end = ${at('2026-06-13T09:00:00Z')} where id = ${m2}`.execute(t.database.db);
  return { creator, a };
}

const day = (d: string, mrr: number, active: number, trialing: number, added: number, lost: number, churn: number) => ({
  day: d,
  mrr_cents: mrr,
  active_subscribers: active,
  trialing,
  new_subscribers: added,
  lost_subscribers: lost,
  churn_rate_30d: churn,
});

describe('metrics history', () => {
  it('writes each finished day once as it stood at its end, for the creator and each community, and a second run writes nothing', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const { creator, a } = await week();
    expect(await t.app.metricsHistory.run({ creatorId: creator.id })).toEqual({ through: '2026-06-14', written: 12 });
    expect(await t.app.metricsHistory.run({ creatorId: creator.id })).toEqual({ through: '2026-06-14', written: 0 });
    const expected = [
      day('2026-06-09', 1000, 1, 0, 1, 0, 0),
      day('2026-06-10', 2000, 2, 0, 1, 0, 0),
      day('2026-06-11', 2000, 2, 1, 1, 0, 0),
      // m3 ended: lost, and 1 of the 3 who were new in the 30 days.
      day('2026-06-12', 1000, 1, 1, 0, 1, 0.3333),
      day('2026-06-13', 2000, 2, 0, 0, 0, 0.3333),
      day('2026-06-14', 2000, 2, 0, 0, 0, 0.3333),
    ];
    const all = json(await history(creator, '?from=2026-06-01&to=2026-06-20')).data;
    expect(all).toEqual({ community_id: null, from: '2026-06-01', to: '2026-06-20', days: expected });
    expect(json(await history(creator, `?from=2026-06-09&to=2026-06-14&community_id=${a.id}`)).data.days).toEqual(expected);
  });

  it('fills the days a stopped node missed, and reads the last 30 finished days by default', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const { creator } = await week();
    await t.app.metricsHistory.run({ creatorId: creator.id });
    clock = new Date('2026-06-18T01:00:00Z');
    expect((await t.app.metricsHistory.run({ creatorId: creator.id })).written).toBe(6);
    const recent = json(await history(creator, '')).data;
    expect([recent.from, recent.to]).toEqual(['2026-05-19', '2026-06-17']);
    expect(recent.days.map((d: { day: string }) => d.day)).toEqual(['09', '10', '11', '12', '13', '14', '15', '16', '17'].map((n) => `2026-06-${n}`));
    expect(recent.days.at(-1)).toEqual(day('2026-06-17', 2000, 2, 0, 0, 0, 0.3333));
  });

  it('refuses a range over 366 days, backwards or malformed, and 404s another creator’s community', async () => {
    const { creator } = await week();
    for (const q of ['?from=2025-06-14&to=2026-06-15', '?from=2026-06-15&to=2026-06-14', '?from=2026-02-30', '?to=yesterday']) {
      expect((await history(creator, q)).statusCode, q).toBe(400);
    }
    expect((await history(creator, '?from=2025-06-15&to=2026-06-15')).statusCode).toBe(200);
    const other = await createCreator(t);
    const theirs = await createCommunity(t, other);
    expect((await history(creator, `?community_id=${theirs.id}`)).statusCode).toBe(404);
  });
});
