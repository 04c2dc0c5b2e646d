import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCommunity, createCreator, createTier, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { addMember, mirrorSubscription, type SubscriptionInput } from '../../../test/members-kit.js';
import { createMetricsHistory } from './history.js';

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

const day = (d: string, mrr: number, active: number, trialing: number, added: number, lost: number, churn: number, partial = false) => ({
  day: d,
  partial,
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
    expect(all).toEqual({ community_id: null, from: '2026-06-01', to: '2026-06-20', days: [...expected, day('2026-06-15', 2000, 2, 0, 0, 0, 0.3333, true)] });
    expect(json(await history(creator, `?from=2026-06-09&to=2026-06-14&community_id=${a.id}`)).data.days).toEqual(expected);
  });

  it('fills the days a stopped node missed, and reads the 30 days ending today by default', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const { creator } = await week();
    await t.app.metricsHistory.run({ creatorId: creator.id });
    clock = new Date('2026-06-18T01:00:00Z');
    expect((await t.app.metricsHistory.run({ creatorId: creator.id })).written).toBe(6);
    const recent = json(await history(creator, '')).data;
    expect([recent.from, recent.to]).toEqual(['2026-05-20', '2026-06-18']);
    expect(recent.days.map((d: { day: string }) => d.day)).toEqual(['09', '10', '11', '12', '13', '14', '15', '16', '17', '18'].map((n) => `2026-06-${n}`));
    expect(recent.days.slice(-2)).toEqual([day('2026-06-17', 2000, 2, 0, 0, 0, 0.3333), day('2026-06-18', 2000, 2, 0, 0, 0, 0.3333, true)]);
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

const daysOf = (res: Awaited<ReturnType<typeof history>>) => json(res).data.days as ReturnType<typeof day>[];

describe('metrics history from the first minute', () => {
  const summary = async (creator: TestCreator) => json(await t.app.inject({ method: 'GET', url: '/api/v1/creator-metrics', headers: creator.headers })).data;
  const stored = async (creatorId: string) =>
    (await t.database.db.selectFrom('metrics_daily').select(sql<string>`day::text`.as('day')).where('creator_id', '=', creatorId).where('community_id', 'is', null).orderBy('day').execute()).map(
      (r) => r.day,
    );

  it('answers the missing days and today, partial and equal to the summary, before the job has ever run for the creator', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const { creator, a } = await week();
    const days = daysOf(await history(creator, '?from=2026-06-01&to=2026-06-15'));
    expect(days.slice(0, -1)).toEqual([
      day('2026-06-09', 1000, 1, 0, 1, 0, 0),
      day('2026-06-10', 2000, 2, 0, 1, 0, 0),
      day('2026-06-11', 2000, 2, 1, 1, 0, 0),
      day('2026-06-12', 1000, 1, 1, 0, 1, 0.3333),
      day('2026-06-13', 2000, 2, 0, 0, 0, 0.3333),
      day('2026-06-14', 2000, 2, 0, 0, 0, 0.3333),
    ]);
    const now = await summary(creator);
    expect(days.at(-1)).toEqual(day('2026-06-15', now.mrr_cents, now.active_subscribers, now.trialing, 0, 0, now.churn_rate_30d, true));
    expect(daysOf(await history(creator, `?community_id=${a.id}`)).map((d) => [d.day, d.partial]).slice(-2)).toEqual([
      ['2026-06-14', false],
      ['2026-06-15', true],
    ]);
    // The job, coming later, finds the days written.
    expect((await t.app.metricsHistory.run({ creatorId: creator.id })).written).toBe(0);
  });

  it('right after a demo-like six months of history, has 30 points plus today for the last 30 days', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const creator = await createCreator(t);
    const a = await createCommunity(t, creator);
    const tier = (await createTier(t, creator, a.id, { price_cents: 1500 })).id;
    for (let i = 0; i < 26; i++) {
      const createdAt = new Date(clock.getTime() - (180 - i * 7) * 86_400_000);
      const ended = i % 3 === 0 ? { status: 'canceled' as const, endedAt: new Date(createdAt.getTime() + 45 * 86_400_000) } : { status: 'active' as const };
      await mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: await addMember(t) }, { priceCents: 1500, createdAt, ...ended });
    }
    const days = daysOf(await history(creator, '?from=2026-05-16&to=2026-06-15'));
    expect(days).toHaveLength(31);
    expect(days.map((d) => d.day)).toEqual(Array.from({ length: 31 }, (_, i) => new Date(Date.parse('2026-05-16T00:00:00Z') + i * 86_400_000).toISOString().slice(0, 10)));
    expect(days.map((d) => d.partial)).toEqual([...Array.from({ length: 30 }, () => false), true]);
    expect(days.at(-1)!.mrr_cents).toBe((await summary(creator)).mrr_cents);
  });

  it('never stores today, and stores a day after it ended with its figures at its end', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const { creator, a } = await week();
    expect(daysOf(await history(creator, '?from=2026-06-14&to=2026-06-15')).map((d) => [d.day, d.active_subscribers, d.partial])).toEqual([
      ['2026-06-14', 2, false],
      ['2026-06-15', 2, true],
    ]);
    expect(await stored(creator.id)).not.toContain('2026-06-15');
    // Someone joins late on the 15th, someone else on the 16th before the read.
    const tier = (await createTier(t, creator, a.id, { price_cents: 500 })).id;
    await mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: await addMember(t) }, { priceCents: 500, status: 'active', createdAt: at('2026-06-15T20:00:00Z') });
    await mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: await addMember(t) }, { priceCents: 500, status: 'active', createdAt: at('2026-06-16T08:00:00Z') });
    clock = new Date('2026-06-16T09:00:00Z');
    const days = daysOf(await history(creator, '?from=2026-06-15&to=2026-06-16'));
    expect(days[0]).toEqual(day('2026-06-15', 2500, 3, 0, 1, 0, 0.25));
    expect(days[1]).toMatchObject({ day: '2026-06-16', partial: true, active_subscribers: 4, new_subscribers: 1, mrr_cents: 3000 });
    expect(await stored(creator.id)).toContain('2026-06-15');
    expect(await stored(creator.id)).not.toContain('2026-06-16');
  });

  it('stores each day once when reads and the job run at the same time, and the job fills the days before a range a read stored', async () => {
    clock = new Date('2026-06-20T12:00:00Z');
    const { creator } = await week();
    const [, first, second] = await Promise.all([
      t.app.metricsHistory.run({ creatorId: creator.id }),
      history(creator, '?from=2026-06-16&to=2026-06-20'),
      history(creator, '?from=2026-06-16&to=2026-06-20'),
    ]);
    expect(daysOf(first)).toEqual(daysOf(second));
    expect(daysOf(first).map((d) => d.day)).toEqual(['2026-06-16', '2026-06-17', '2026-06-18', '2026-06-19', '2026-06-20']);

    const later = (await week()).creator;
    expect(daysOf(await history(later, '?from=2026-06-17&to=2026-06-19'))).toHaveLength(3);
    await t.app.metricsHistory.run({ creatorId: later.id });
    expect(await stored(later.id)).toEqual(['09', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19'].map((n) => `2026-06-${n}`));
    expect(await stored(creator.id)).toEqual(await stored(later.id));
  });

  it('computes on a read only the most recent days its budget allows, leaving the rest to the job', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const { creator } = await week();
    // 3 subscriptions and a budget of 5: room for the two most recent missing days.
    const small = createMetricsHistory({ db: t.database.db, now: () => clock, readBackfillCost: 5 });
    expect(await small.backfill({ creatorId: creator.id }, '2026-06-01', '2026-06-15')).toEqual({ written: 2, left: 4 });
    expect(await stored(creator.id)).toEqual(['2026-06-13', '2026-06-14']);
    expect((await t.app.metricsHistory.run({ creatorId: creator.id })).written).toBe(4 + 6);
  });
});

describe('metrics history and the statuses that are not live', () => {
  it('counts a subscription until it lapsed into unpaid, and one that never was live not at all', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const creator = await createCreator(t);
    const a = await createCommunity(t, creator);
    const tier = (await createTier(t, creator, a.id, { price_cents: 1000 })).id;
    const join = async (status: 'unpaid' | 'incomplete', createdAt: Date, lapsedAt: Date) => {
      const id = await mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: await addMember(t) }, { priceCents: 1000, status, createdAt });
      await sql`update subscriptions set lapsed_at = ${lapsedAt} where id = ${id}`.execute(t.database.db);
    };
    await join('unpaid', at('2026-06-09T08:00:00Z'), at('2026-06-11T12:00:00Z'));
    await join('incomplete', at('2026-06-10T10:00:00Z'), at('2026-06-10T10:00:00Z'));
    expect(daysOf(await history(creator, '?from=2026-06-09&to=2026-06-12'))).toEqual([
      day('2026-06-09', 1000, 1, 0, 1, 0, 0),
      day('2026-06-10', 1000, 1, 0, 0, 0, 0),
      day('2026-06-11', 0, 0, 0, 0, 1, 1),
      day('2026-06-12', 0, 0, 0, 0, 0, 1),
    ]);
  });
});
