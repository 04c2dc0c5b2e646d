import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCommunity, createCreator, createTier, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { addMember, DAY_MS, mirrorSubscription } from '../../../test/members-kit.js';
import type { SubscriptionStatus } from '../../db/types.js';
import { createActivityRepo } from '../activity/activity.js';
import { SUBSCRIPTION_STATUSES } from '../subscriptions/status.js';
import { ALL_COMMUNITIES, createMetricsAggregates } from './aggregates.js';
import { createMetricsRepo } from './metrics.repo.js';
import { periodStarts, windowAt } from './metrics.service.js';

/**
 * The counters kept by the subscription mirror (aggregates.ts) against the mirror itself:
 * after any sequence of subscription changes, a from-scratch rebuild finds nothing to fix, and
 * the figures read from the counters equal those of a scan of the subscriptions (the queries
 * below, written independently of the counters: per member, over their subscriptions).
 */
const NOW = new Date('2026-06-15T12:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => NOW });
});
afterAll(async () => t.close());

const aggregates = createMetricsAggregates();
const rebuild = (creatorId: string) => t.database.db.transaction().execute((trx) => aggregates.rebuild(creatorId, trx));
const get = async (creator: TestCreator, url: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
};

/** A new creator with communities A (Basic, Pro) and B (Club). */
async function twoCommunities() {
  const creator = await createCreator(t);
  const a = await createCommunity(t, creator);
  const b = await createCommunity(t, creator);
  const tiers = [
    { id: (await createTier(t, creator, a.id, { name: 'Basic', price_cents: 1000 })).id, communityId: a.id },
    { id: (await createTier(t, creator, a.id, { name: 'Pro', price_cents: 2500 })).id, communityId: a.id },
    { id: (await createTier(t, creator, b.id, { name: 'Club', price_cents: 2000 })).id, communityId: b.id },
  ];
  return { creator, a, b, tiers };
}

/**
 * When a subscription stopped being live (null: it is live): its end once canceled, or its lapse
 * if that came first; its lapse (migrations/0020) in a status that gives no access.
 */
const END = sql`case when status = 'canceled' then least(coalesce(ended_at, canceled_at, updated_at), lapsed_at)
  when status not in ('trialing', 'active', 'past_due') then coalesce(lapsed_at, updated_at) end`;

/** The summary's subscriber figures by scanning, DESIGN §7 word for word. */
async function scanned(creatorId: string, communityId: string | null) {
  const from = new Date(NOW.getTime() - 30 * DAY_MS);
  const { rows } = await sql<Record<string, number>>`
    with s as (
      select member_id, status, price_cents, billing_period, created_at as a,
             ${END} as b
      from subscriptions where creator_id = ${creatorId} and (${communityId}::uuid is null or community_id = ${communityId}::uuid)
    ),
    m as (
      select member_id,
             bool_or(status in ('active', 'past_due')) as paying, bool_or(status = 'trialing') as trialing, bool_or(status in ('trialing', 'active', 'past_due')) as live,
             bool_or(a <= ${from} and (b is null or b > ${from})) as live_at_start,
             bool_or(a > ${from} and (b is null or b > a)) as started_in_window,
             max(b) filter (where b > a) as last_ended_at
      from s group by member_id
    )
    select (count(*) filter (where paying))::int as active_subscribers, (count(*) filter (where trialing and not paying))::int as trialing,
           (select coalesce(sum(monthly_cents(price_cents, billing_period)), 0) from s where status in ('active', 'past_due'))::int as mrr_cents,
           (count(*) filter (where started_in_window and not live_at_start))::int as new_subscribers,
           (count(*) filter (where not live and last_ended_at > ${from}))::int as lost_subscribers
    from m`.execute(t.database.db);
  return rows[0]!;
}

/** Retention cells by scanning: per cohort start, [size, live at each later period's end (the current one: now)]. */
async function scannedCohorts(creatorId: string, communityId: string | null, period: 'week' | 'month', periods: number) {
  const starts = periodStarts(NOW, period, periods);
  const ends = starts.map((s, i) => starts[i + 1] ?? (period === 'week' ? new Date(s.getTime() + 7 * DAY_MS) : new Date(Date.UTC(s.getUTCFullYear(), s.getUTCMonth() + 1, 1))));
  const cells: number[][] = [];
  for (let i = 0; i < periods; i++) {
    const { rows } = await sql<{ member_id: string }>`
      select member_id from subscriptions s
      where creator_id = ${creatorId} and (${communityId}::uuid is null or community_id = ${communityId}::uuid)
        and (${END} is null or ${END} > created_at)
      group by member_id having min(created_at) >= ${starts[i]!} and min(created_at) < ${ends[i]!}`.execute(t.database.db);
    const row = [rows.length];
    for (let k = i + 1; k < periods && rows.length > 0; k++) {
      const at = k === periods - 1 ? NOW : ends[k]!;
      const { rows: live } = await sql<{ n: number }>`select count(distinct member_id)::int as n from subscriptions
        where creator_id = ${creatorId} and (${communityId}::uuid is null or community_id = ${communityId}::uuid)
          and member_id = any(${rows.map((r) => r.member_id)}::uuid[])
          and created_at <= ${at} and (${END} is null or ${END} > ${at})`.execute(t.database.db);
      row.push(live[0]!.n);
    }
    cells.push(row);
  }
  return cells;
}

type Status = SubscriptionStatus;
type Op =
  | { kind: 'join'; member: number; tier: number; status: Status; at: number; price: number; period: 'monthly' | 'quarterly' | 'yearly' }
  | { kind: 'change'; sub: number; tier: number; status: Status; endAfter: number };

/**
 * Instants around NOW (Monday 15 June 2026, 12:00 UTC) in hours, with the edges that matter:
 * exactly 30 days ago and an hour later, and month and week starts (1 May, 1 June, 8 and 15 June).
 */
const HOUR = 3_600_000;
const edges = [-30 * 24, -30 * 24 + 1, -(45 * 24 + 12), -(14 * 24 + 12), -(7 * 24 + 12), -12];
/** Lengths in hours that carry a start on an edge to another: a week, two, 31 days (1 May → 1 June). */
const spans = [0, 7 * 24, 14 * 24, 31 * 24];

describe('the counters the mirror keeps', () => {
  it('equal a from-scratch rebuild and a scan of the subscriptions after any sequence of subscription changes', async () => {
    // Every status the mirror stores, those that give no access included (issue #26).
    const status = fc.constantFrom<Status>(...SUBSCRIPTION_STATUSES);
    const hours = fc.oneof(fc.integer({ min: -200 * 24, max: 0 }), fc.constantFrom(...edges));
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant('join' as const),
        member: fc.integer({ min: 0, max: 3 }),
        tier: fc.integer({ min: 0, max: 2 }),
        status,
        at: hours,
        price: fc.constantFrom(1000, 2500, 10001),
        period: fc.constantFrom('monthly' as const, 'quarterly' as const, 'yearly' as const),
      }),
      fc.record({
        kind: fc.constant('change' as const),
        sub: fc.nat(),
        tier: fc.integer({ min: 0, max: 2 }),
        status,
        endAfter: fc.oneof(fc.integer({ min: -48, max: 60 * 24 }), fc.constantFrom(...spans)),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const { creator, a, b, tiers } = await twoCommunities();
        const members = [await addMember(t), await addMember(t), await addMember(t), await addMember(t)];
        const subs: Array<{ id: string; memberId: string; createdAt: Date }> = [];
        for (const o of ops) {
          if (o.kind === 'join' || subs.length === 0) {
            const j = o.kind === 'join' ? o : { member: 0, tier: o.tier, status: o.status, at: -24, price: 1000, period: 'monthly' as const };
            const createdAt = new Date(NOW.getTime() + j.at * HOUR);
            const tier = tiers[j.tier]!;
            const memberId = members[j.member]!;
            const endedAt = j.status === 'canceled' ? new Date(createdAt.getTime() + 24 * HOUR) : undefined;
            const id = await mirrorSubscription(t, creator, { communityId: tier.communityId, tierId: tier.id, memberId }, {
              status: j.status, createdAt, priceCents: j.price, billingPeriod: j.period, endedAt,
            });
            subs.push({ id, memberId, createdAt });
          } else {
            const sub = subs[o.sub % subs.length]!;
            const tier = tiers[o.tier]!;
            const endedAt = o.status === 'canceled' ? new Date(sub.createdAt.getTime() + o.endAfter * HOUR) : undefined;
            await mirrorSubscription(t, creator, { communityId: tier.communityId, tierId: tier.id, memberId: sub.memberId, id: sub.id }, { status: o.status, endedAt, at: NOW });
          }
        }
        expect(await rebuild(creator.id)).toBe(0);
        for (const scope of [null, a.id, b.id]) {
          const figures = await get(creator, scope ? `/creator-metrics/${scope}` : '/creator-metrics');
          const want = await scanned(creator.id, scope);
          expect({ ...figures.growth_30d, active_subscribers: figures.active_subscribers, trialing: figures.trialing, mrr_cents: figures.mrr_cents }).toEqual({
            new_subscribers: want.new_subscribers, lost_subscribers: want.lost_subscribers, net_growth: want.new_subscribers! - want.lost_subscribers!,
            active_subscribers: want.active_subscribers, trialing: want.trialing, mrr_cents: want.mrr_cents,
          });
          for (const period of ['month', 'week'] as const) {
            const q = `/creator-metrics/cohorts?period=${period}&periods=8${scope ? `&community_id=${scope}` : ''}`;
            const got = (await get(creator, q)).cohorts.map((c: { size: number; retention_pct: number[] }) =>
              [c.size, ...c.retention_pct.slice(1).map((p) => Math.round((p * c.size) / 100))]);
            expect(got).toEqual(await scannedCohorts(creator.id, scope, period, 8));
          }
        }
      }),
      { numRuns: 25 },
    );
  }, 240_000);

  it('count engaged members exactly whether their activity was folded or not, as members come, go and act', async () => {
    type Act = { kind: 'join'; member: number; tier: number } | { kind: 'cancel'; sub: number } | { kind: 'act'; member: number } | { kind: 'fold' } | { kind: 'tick'; hours: number };
    const act: fc.Arbitrary<Act> = fc.oneof(
      fc.record({ kind: fc.constant('join' as const), member: fc.integer({ min: 0, max: 1 }), tier: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ kind: fc.constant('cancel' as const), sub: fc.nat() }),
      fc.record({ kind: fc.constant('act' as const), member: fc.integer({ min: 0, max: 1 }) }),
      fc.record({ kind: fc.constant('fold' as const) }),
      fc.record({ kind: fc.constant('tick' as const), hours: fc.oneof(fc.integer({ min: 1, max: 96 }), fc.constant(24 * 10)) }),
    );
    const repo = createMetricsRepo(t.database.db);
    const activity = createActivityRepo();
    await fc.assert(
      fc.asyncProperty(fc.array(act, { minLength: 1, maxLength: 25 }), async (acts) => {
        let clock = new Date(NOW.getTime() - 31 * DAY_MS);
        const counters = createMetricsAggregates({ now: () => clock });
        const { creator, a, b, tiers } = await twoCommunities();
        const members = [await addMember(t), await addMember(t)];
        const subs: Array<{ id: string; memberId: string; tier: (typeof tiers)[number] }> = [];
        // The creator's counters start on this clock (activity is stamped with it).
        await t.database.db.transaction().execute((trx) => counters.fold(creator.id, trx));
        for (const x of acts) {
          if (x.kind === 'join') {
            const tier = tiers[x.tier]!;
            const id = await mirrorSubscription(t, creator, { communityId: tier.communityId, tierId: tier.id, memberId: members[x.member]! }, { status: 'active', createdAt: clock, priceCents: 1000 });
            subs.push({ id, memberId: members[x.member]!, tier });
          } else if (x.kind === 'cancel' && subs.length > 0) {
            const sub = subs[x.sub % subs.length]!;
            await mirrorSubscription(t, creator, { communityId: sub.tier.communityId, tierId: sub.tier.id, memberId: sub.memberId, id: sub.id }, { status: 'canceled', endedAt: clock });
          } else if (x.kind === 'act') {
            await t.database.db.transaction().execute((trx) => activity.record(creator.id, members[x.member]!, clock, trx));
          } else if (x.kind === 'fold') {
            await t.database.db.transaction().execute((trx) => counters.fold(creator.id, trx));
          } else if (x.kind === 'tick') {
            clock = new Date(Math.min(NOW.getTime(), clock.getTime() + x.hours * 3_600_000));
          }
        }
        const w = windowAt(NOW);
        const check = async () => {
          for (const scope of [null, a.id, b.id]) {
            const { rows } = await sql<{ n: number }>`select count(*)::int as n from member_activity cm
              where cm.creator_id = ${creator.id} and cm.last_active_at > ${w.from} and exists (
                select 1 from subscriptions s where s.creator_id = cm.creator_id and s.member_id = cm.member_id and s.status <> 'canceled'
                  and (${scope}::uuid is null or s.community_id = ${scope}::uuid))`.execute(t.database.db);
            expect(await repo.engaged({ creatorId: creator.id, communityId: scope ?? undefined }, w)).toBe(rows[0]!.n);
          }
        };
        await check();
        await t.database.db.transaction().execute((trx) => counters.fold(creator.id, trx));
        await check();
        await t.database.db.transaction().execute((trx) => counters.rebuild(creator.id, trx));
        await check();
      }),
      {
        numRuns: 40,
        // Activity folded in one community, then a second joined: the new scope starts from the folded day.
        examples: [[[{ kind: 'tick', hours: 240 }, { kind: 'join', member: 0, tier: 0 }, { kind: 'tick', hours: 2 }, { kind: 'act', member: 0 }, { kind: 'tick', hours: 2 }, { kind: 'fold' }, { kind: 'join', member: 0, tier: 2 }]]],
      },
    );
  }, 240_000);

  it('are computed for a creator who has none (as at the first start after upgrading), and the fold job folds every creator', async () => {
    const creator = await createCreator(t);
    const a = await createCommunity(t, creator);
    const tier = (await createTier(t, creator, a.id, { name: 'Basic', price_cents: 1000 })).id;
    const m = await addMember(t);
    await mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: m }, { status: 'active', createdAt: new Date(NOW.getTime() - 3 * DAY_MS), priceCents: 1000 });
    await t.database.db.transaction().execute((trx) => createActivityRepo().record(creator.id, m, NOW, trx));
    const before = await get(creator, '/creator-metrics');
    expect(before).toMatchObject({ active_subscribers: 1, mrr_cents: 1000, engagement_rate_30d: 1, growth_30d: { new_subscribers: 1 } });
    for (const table of ['metrics_spells', 'metrics_members', 'metrics_days', 'metrics_cohorts', 'metrics_tiers', 'metrics_scopes'] as const) {
      await sql`delete from ${sql.table(table)} where creator_id = ${creator.id}`.execute(t.database.db);
    }
    expect((await get(creator, '/creator-metrics')).active_subscribers).toBe(0);
    // On a shared test database other files' creators may be built too: at least this one.
    expect(await t.app.metricsCounters.buildMissing(t.database.db)).toBeGreaterThanOrEqual(1);
    expect(await get(creator, '/creator-metrics')).toEqual(before);
    await t.app.metricsCounters.foldAll(t.database.db);
    expect(await get(creator, '/creator-metrics')).toEqual(before);
  });

  it('are fixed by reconciliation, which reports the rows it corrected, and a second run finds nothing', async () => {
    const creator = await createCreator(t);
    const a = await createCommunity(t, creator);
    const tier = (await createTier(t, creator, a.id, { name: 'Basic', price_cents: 1000 })).id;
    const m = await addMember(t);
    await mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: m }, { status: 'active', createdAt: new Date(NOW.getTime() - 40 * DAY_MS), priceCents: 1000 });
    const reconcile = async () =>
      json(await t.app.inject({ method: 'POST', url: `/api/v1/admin/reconcile?creator_id=${creator.id}`, headers: { authorization: `Bearer ${t.adminToken}` } })).data;
    // Activity not folded yet is not drift, and a check that finds none writes nothing (no rebuild).
    await t.database.db.transaction().execute((trx) => createActivityRepo().record(creator.id, m, NOW, trx));
    const watermark = () => t.database.db.selectFrom('metrics_scopes').select('activity_folded_at').where('creator_id', '=', creator.id).where('scope_id', '=', ALL_COMMUNITIES).executeTakeFirstOrThrow();
    const folded = await watermark();
    expect((await reconcile()).metrics_rows_fixed).toBe(0);
    expect(await watermark()).toEqual(folded);
    const before = await get(creator, '/creator-metrics');
    expect(before.engagement_rate_30d).toBe(1);
    // Drift: counters written around the mirror.
    await sql`update metrics_tiers set mrr_cents = mrr_cents + 7, members_all = 5 where creator_id = ${creator.id}`.execute(t.database.db);
    await sql`delete from metrics_days where creator_id = ${creator.id}`.execute(t.database.db);
    expect((await get(creator, '/creator-metrics')).mrr_cents).toBe(1007);
    // The tier row, and in each scope (its community, all communities) the day row of the start
    // (the activity is not folded yet: it had no day row to lose).
    expect((await reconcile()).metrics_rows_fixed).toBe(3);
    expect(await get(creator, '/creator-metrics')).toEqual(before);
    expect((await reconcile()).metrics_rows_fixed).toBe(0);
  });
});
