import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../../db/tx.js';
import { buildTestApp, createCommunity, createCreator, createTier, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { addMember, mirrorSubscription, type SubscriptionInput } from '../../../test/members-kit.js';
import { nextDay } from './history-day.js';
import { dayFigures, type DayTotals } from './history-pass.js';
import type { Scope } from './metrics.repo.js';

/**
 * The one-pass history (history-pass.ts) held equal, day by day, to the query it replaced: every
 * subscription paired with every day (O(subscriptions × days)), kept here as the oracle, its
 * price taken per subscription and day from subscription_changes as the pass takes it; and
 * the day computed from the day before and its changes (history-day.ts), chained over the range.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => new Date('2026-06-15T12:00:00Z') });
});
afterAll(async () => t.close());

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const daysFrom = (from: string, n: number) => Array.from({ length: n }, (_, i) => dayOf(Date.parse(`${from}T00:00:00Z`) + i * DAY_MS));

async function pairing(scope: Scope, days: string[], trx: Executor): Promise<DayTotals[]> {
  const { rows } = await sql<DayTotals>`
    with d as (select day, (day + 1)::timestamp at time zone 'UTC' as t from unnest(${days}::date[]) as d(day)),
    s as (
      select * from (
        select s.id, s.member_id, s.price_cents, s.billing_period, s.created_at, s.trial_end,
               case when s.status = 'canceled' then least(coalesce(s.ended_at, s.canceled_at, s.updated_at), s.lapsed_at)
                    when not subscription_live(s.status) then coalesce(s.lapsed_at, s.updated_at) end as ended_at
        from subscriptions s
        where s.creator_id = ${scope.creatorId} and (${scope.communityId ?? null}::uuid is null or s.community_id = ${scope.communityId ?? null}::uuid)
      ) x where ended_at is null or ended_at > created_at
    ),
    -- The price at the day's end: the last recorded before it, else the first recorded, else the current.
    sp as (
      select d.day, d.t, s.*, monthly_cents(coalesce(p.price_cents, s.price_cents), coalesce(p.billing_period, s.billing_period)) as monthly
      from d cross join s
      left join lateral (
        select x.price_cents, x.billing_period from (
          (select c.price_cents, c.billing_period, 1 as k from subscription_changes c where c.subscription_id = s.id and c.recorded_at < d.t order by c.recorded_at desc, c.id desc limit 1)
          union all
          (select c.price_cents, c.billing_period, 2 from subscription_changes c where c.subscription_id = s.id order by c.recorded_at, c.id limit 1)
        ) x order by k limit 1
      ) p on true
    ),
    m as (
      select day, t, member_id,
             bool_or(created_at < t and (ended_at is null or ended_at > t)) as live,
             bool_or(created_at < t and (ended_at is null or ended_at > t) and not coalesce(trial_end > t, false)) as paying,
             coalesce(sum(monthly) filter (where created_at < t and (ended_at is null or ended_at > t) and not coalesce(trial_end > t, false)), 0) as mrr,
             bool_or(created_at < t - interval '1 day' and (ended_at is null or ended_at > t - interval '1 day')) as live_at_day_start,
             bool_or(created_at >= t - interval '1 day' and created_at < t) as started_that_day,
             bool_or(created_at < t - interval '30 days' and (ended_at is null or ended_at > t - interval '30 days')) as live_at_start,
             bool_or(created_at >= t - interval '30 days' and created_at < t) as started_in_window,
             max(ended_at) filter (where ended_at <= t) as last_ended_at
      from sp group by day, t, member_id
    ),
    f as (
      select day, coalesce(sum(mrr), 0)::bigint as mrr_cents,
             (count(*) filter (where paying))::int as active_subscribers,
             (count(*) filter (where live and not paying))::int as trialing,
             (count(*) filter (where started_that_day and not live_at_day_start))::int as new_subscribers,
             (count(*) filter (where not live and last_ended_at > t - interval '1 day'))::int as lost_subscribers,
             (count(*) filter (where not live and last_ended_at > t - interval '30 days'))::int as lost_30d,
             (count(*) filter (where live_at_start or started_in_window))::int as base_30d
      from m group by day
    )
    select d.day::text as day, coalesce(f.mrr_cents, 0)::bigint as mrr_cents, coalesce(f.active_subscribers, 0) as active_subscribers,
           coalesce(f.trialing, 0) as trialing, coalesce(f.new_subscribers, 0) as new_subscribers, coalesce(f.lost_subscribers, 0) as lost_subscribers,
           round(coalesce(f.lost_30d::numeric / nullif(f.base_30d, 0), 0), 4) as churn_rate_30d,
           coalesce(f.lost_30d, 0) as lost_30d, coalesce(f.base_30d, 0) as base_30d
    from d left join f on f.day = d.day order by d.day`.execute(trx);
  return rows;
}

/** A small seeded generator, so a failure replays. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: T[]) => xs[int(xs.length)]! };
}

/** A subscription's mirror writes, each dated in subscription_changes at the time it happened. */
async function mirrorAt(creator: TestCreator, where: { communityId: string; tierId: string; memberId: string; id?: string }, input: SubscriptionInput, at: Date) {
  const id = await mirrorSubscription(t, creator, where, { ...input, at });
  await sql`update subscription_changes set recorded_at = ${at}
    where subscription_id = ${id} and id = (select id from subscription_changes where subscription_id = ${id} order by recorded_at desc, id desc limit 1)
      and recorded_at > now() - interval '1 hour'`.execute(t.database.db);
  return id;
}

/** A creator of two communities whose members trial, pay, change price and period, lapse, cancel and come back, at random (seeded) times from 1 March to 14 June. */
async function mixedCreator(seed: number) {
  const r = random(seed);
  const creator = await createCreator(t);
  const communities = [await createCommunity(t, creator), await createCommunity(t, creator)];
  const tiers = await Promise.all(communities.map(async (c) => ({ communityId: c.id, tierId: (await createTier(t, creator, c.id, { price_cents: 1000 })).id })));
  const start = Date.parse('2026-03-01T00:00:00Z');
  // Some times fall on midnight exactly: the edges of a day.
  const time = (after: number, within: number) => new Date(r.next() < 0.2 ? after + (r.int(within / DAY_MS) + 1) * DAY_MS - (after % DAY_MS) : after + 1 + r.int(within));
  for (let m = 0; m < 24; m++) {
    const memberId = await addMember(t);
    let from = start + r.int(60 * DAY_MS);
    for (let k = 0; k < 1 + r.int(3); k++) {
      const where = { ...r.pick(tiers), memberId };
      const createdAt = time(from - 10 * DAY_MS, 30 * DAY_MS);
      const period = r.pick(['monthly', 'yearly', 'quarterly'] as const);
      const first = r.next() < 0.15 ? 'incomplete' : r.next() < 0.2 ? 'past_due' : 'active';
      const id = await mirrorAt(creator, where, { status: first, createdAt, priceCents: 500 + 100 * r.int(20), billingPeriod: period }, createdAt);
      if (r.next() < 0.35) await sql`update subscriptions set trial_end = ${time(createdAt.getTime(), 20 * DAY_MS)} where id = ${id}`.execute(t.database.db);
      let at = createdAt.getTime();
      for (let c = r.int(3); c > 0; c--) {
        at = time(at, 15 * DAY_MS).getTime();
        const periodNow = r.next() < 0.3 ? r.pick(['monthly', 'yearly'] as const) : period;
        await mirrorAt(creator, { ...where, id }, { status: 'active', priceCents: 500 + 100 * r.int(20), billingPeriod: periodNow }, new Date(at));
      }
      // A record from before migration 0031: no period.
      if (r.next() < 0.2) await sql`update subscription_changes set billing_period = null where subscription_id = ${id}`.execute(t.database.db);
      const end = r.next();
      const endAt = time(at, 40 * DAY_MS);
      if (end < 0.3) await mirrorAt(creator, { ...where, id }, { status: 'canceled', endedAt: endAt }, endAt);
      else if (end < 0.45) await mirrorAt(creator, { ...where, id }, { status: 'unpaid' }, endAt);
      else if (end < 0.5) await mirrorAt(creator, { ...where, id }, { status: 'canceled', endedAt: new Date(createdAt.getTime() + r.int(3 * DAY_MS)) }, createdAt);
      // A row from before migration 0020: its end is when it was last written.
      if (end < 0.45 && r.next() < 0.3) await sql`update subscriptions set ended_at = null, canceled_at = null, lapsed_at = null, updated_at = ${endAt} where id = ${id}`.execute(t.database.db);
      from = endAt.getTime() - r.int(5) * DAY_MS;
    }
  }
  return { creator, communities };
}

describe('metrics history in one pass', () => {
  it('gives every day of a range what pairing each subscription with each day gives, for the creator and each community', async () => {
    for (const seed of [1, 2, 3]) {
      const { creator, communities } = await mixedCreator(seed);
      const days = daysFrom('2026-02-25', 111);
      const scopes: Scope[] = [{ creatorId: creator.id }, ...communities.map((c) => ({ creatorId: creator.id, communityId: c.id }))];
      for (const scope of scopes) {
        const expected = await pairing(scope, days, t.database.db);
        expect(expected.some((d) => Number(d.lost_subscribers) > 0) && expected.some((d) => Number(d.trialing) > 0), `seed ${seed} exercises lost and trialing`).toBe(true);
        expect(await dayFigures(scope, days, t.database.db), `seed ${seed} ${scope.communityId ?? 'all'}`).toEqual(expected);
        // Days apart, in any order: the pass still starts from the first change.
        const some = [days[100]!, days[3]!, days[57]!, days[58]!];
        expect(await dayFigures(scope, some, t.database.db)).toEqual(await pairing(scope, [...some].sort(), t.database.db));
      }
    }
  }, 120_000);

  it('computes each day from the day before and that day’s changes as pairing each subscription with each day does, for the creator and each community', async () => {
    for (const seed of [4, 5, 6]) {
      const { creator, communities } = await mixedCreator(seed);
      const days = daysFrom('2026-02-25', 111);
      const scopes: Scope[] = [{ creatorId: creator.id }, ...communities.map((c) => ({ creatorId: creator.id, communityId: c.id }))];
      for (const scope of scopes) {
        const expected = await pairing(scope, days, t.database.db);
        // The first day by the pass, then each from the one before, as the job chains them.
        const chained = await dayFigures(scope, days.slice(0, 1), t.database.db);
        for (const day of days.slice(1)) chained.push(await nextDay(scope, day, chained.at(-1)!, t.database.db));
        expect(chained, `seed ${seed} ${scope.communityId ?? 'all'}`).toEqual(expected);
      }
    }
  }, 180_000);

  it('counts a day’s MRR at the price recorded for it that day, and a day before the first record at the earliest recorded price', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const tierId = (await createTier(t, creator, community.id, { price_cents: 1000 })).id;
    const where = { communityId: community.id, tierId, memberId: await addMember(t) };
    // Joined on 1 June; its first record is from 3 June (as one mirrored before the recording began would be).
    const id = await mirrorAt(creator, where, { status: 'active', createdAt: new Date('2026-06-01T08:00:00Z'), priceCents: 1000 }, new Date('2026-06-03T08:00:00Z'));
    await mirrorAt(creator, { ...where, id }, { status: 'active', priceCents: 2000 }, new Date('2026-06-05T10:00:00Z'));
    await mirrorAt(creator, { ...where, id }, { status: 'active', priceCents: 36000, billingPeriod: 'yearly' }, new Date('2026-06-07T00:00:00Z'));
    const rows = await dayFigures({ creatorId: creator.id }, daysFrom('2026-05-31', 9), t.database.db);
    expect(rows.map((d) => [d.day, Number(d.mrr_cents)])).toEqual([
      ['2026-05-31', 0],
      ['2026-06-01', 1000],
      ['2026-06-02', 1000],
      ['2026-06-03', 1000],
      ['2026-06-04', 1000],
      ['2026-06-05', 2000],
      // Recorded at midnight, the 7th's first instant: the 6th ended at the old price.
      ['2026-06-06', 2000],
      ['2026-06-07', 3000],
      ['2026-06-08', 3000],
    ]);
  });
});
