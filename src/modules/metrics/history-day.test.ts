import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCommunity, createCreator, createTier, type TestApp } from '../../../test/helpers.js';
import { addMember, mirrorSubscription } from '../../../test/members-kit.js';
import { dayFigures } from './history-pass.js';

/**
 * The job's steady state (history-day.ts): a day computed from the stored day before it and
 * that day's changes, and the full pass when the stored day cannot be trusted to start from.
 * Equality with the pass over random histories is held in history-pass.test.ts; here, which
 * path a day takes, seen by a stored day altered by hand (a day started from it carries the
 * alteration on; the pass does not).
 */
let clock = new Date('2026-06-14T12:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const at = (iso: string) => new Date(iso);

/** Two members paying from 9 and 10 June; the history stored through the 13th, the mirror's writes recorded before it was. */
async function storedThrough13th() {
  clock = new Date('2026-06-14T12:00:00Z');
  const creator = await createCreator(t);
  const community = await createCommunity(t, creator);
  const tierId = (await createTier(t, creator, community.id, { price_cents: 1000 })).id;
  const join = async (createdAt: Date) => {
    const where = { communityId: community.id, tierId, memberId: await addMember(t) };
    return { where, id: await mirrorSubscription(t, creator, where, { status: 'active', createdAt, priceCents: 1000 }) };
  };
  const first = await join(at('2026-06-09T08:00:00Z'));
  await join(at('2026-06-10T10:00:00Z'));
  // Recorded well before the days were stored, as a day's writes are when the job stores it after midnight.
  await sql`update subscription_changes set recorded_at = recorded_at - interval '1 hour' where creator_id = ${creator.id}`.execute(t.database.db);
  expect(await t.app.metricsHistory.run({ creatorId: creator.id })).toEqual({ through: '2026-06-13', written: 10 });
  // The 13th altered: 100 more paying members than the subscriptions say.
  await sql`update metrics_daily set active_subscribers = active_subscribers + 100 where creator_id = ${creator.id} and day = '2026-06-13'`.execute(t.database.db);
  clock = new Date('2026-06-15T12:00:00Z');
  return { creator, community, first };
}

const stored = async (creatorId: string, day: string) => {
  const { rows } = await sql<{ community_id: string | null; active: number; lost_30d: number | null; base_30d: number | null }>`
    select community_id, active_subscribers as active, lost_30d, base_30d from metrics_daily
    where creator_id = ${creatorId} and day = ${day}::date order by community_id nulls first`.execute(t.database.db);
  return rows;
};

describe('metrics history, a day from the day before', () => {
  it('computes the next day from the stored day before it and that day’s changes, with the running counts stored for the day after', async () => {
    const { creator, community } = await storedThrough13th();
    expect(await t.app.metricsHistory.run({ creatorId: creator.id })).toEqual({ through: '2026-06-14', written: 2 });
    const [pass] = await dayFigures({ creatorId: creator.id }, ['2026-06-14'], t.database.db);
    expect(pass!.active_subscribers).toBe(2);
    expect(await stored(creator.id, '2026-06-14')).toEqual([
      { community_id: null, active: 102, lost_30d: 0, base_30d: 2 },
      { community_id: community.id, active: 102, lost_30d: 0, base_30d: 2 },
    ]);
  });

  it('computes up to a week a stopped node missed day by day from the stored day before, and more days in one pass', async () => {
    const week = await storedThrough13th();
    clock = new Date('2026-06-21T12:00:00Z');
    expect(await t.app.metricsHistory.run({ creatorId: week.creator.id })).toEqual({ through: '2026-06-20', written: 14 });
    expect((await stored(week.creator.id, '2026-06-20')).map((r) => r.active)).toEqual([102, 102]);
    const more = await storedThrough13th();
    clock = new Date('2026-06-22T12:00:00Z');
    expect(await t.app.metricsHistory.run({ creatorId: more.creator.id })).toEqual({ through: '2026-06-21', written: 16 });
    expect((await stored(more.creator.id, '2026-06-21')).map((r) => r.active)).toEqual([2, 2]);
  });

  it('computes the next day in one pass when a cancellation the mirror recorded after the day before was stored is dated before it, so no later day carries the difference', async () => {
    const { creator, community, first } = await storedThrough13th();
    // The processor canceled on the 12th; the mirror learns of it only now.
    await mirrorSubscription(t, creator, { ...first.where, id: first.id }, { status: 'canceled', endedAt: at('2026-06-12T10:00:00Z') });
    expect(await t.app.metricsHistory.run({ creatorId: creator.id })).toEqual({ through: '2026-06-14', written: 2 });
    expect(await stored(creator.id, '2026-06-14')).toEqual([
      { community_id: null, active: 1, lost_30d: 1, base_30d: 2 },
      { community_id: community.id, active: 1, lost_30d: 1, base_30d: 2 },
    ]);
  });

  it('computes the next day in one pass after a day stored before its running counts were (migration 0033), and stores them', async () => {
    const { creator, community } = await storedThrough13th();
    await sql`update metrics_daily set lost_30d = null, base_30d = null where creator_id = ${creator.id}`.execute(t.database.db);
    expect(await t.app.metricsHistory.run({ creatorId: creator.id })).toEqual({ through: '2026-06-14', written: 2 });
    expect(await stored(creator.id, '2026-06-14')).toEqual([
      { community_id: null, active: 2, lost_30d: 0, base_30d: 2 },
      { community_id: community.id, active: 2, lost_30d: 0, base_30d: 2 },
    ]);
  });

  it('computes a new subscription the mirror first sees after the day before was stored, started before it, in one pass', async () => {
    const { creator, community } = await storedThrough13th();
    const tierId = (await createTier(t, creator, community.id, { price_cents: 500 })).id;
    await mirrorSubscription(t, creator, { communityId: community.id, tierId, memberId: await addMember(t) }, { status: 'active', createdAt: at('2026-06-13T23:59:00Z'), priceCents: 500 });
    expect(await t.app.metricsHistory.run({ creatorId: creator.id })).toEqual({ through: '2026-06-14', written: 2 });
    expect((await stored(creator.id, '2026-06-14')).map((r) => r.active)).toEqual([3, 3]);
  });
});
