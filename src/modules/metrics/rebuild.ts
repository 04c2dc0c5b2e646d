import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { ALL_COMMUNITIES, COUNTER_DELTAS, FOLD_MARGIN, foldActivity, lockCreator } from './counters.js';

/** One counter row, keyed (kind, scope or tier, k1..k3), as the comparison reads them. */
const KEPT_COUNTERS = (creatorId: string) => sql`
  select 'days' as kind, scope_id, day as k1, null::text as k2, null::date as k3, starts::bigint as v1, ends::bigint as v2, final_ends::bigint as v3, active::bigint as v4
  from metrics_days where creator_id = ${creatorId}
  union all select 'cohorts', scope_id, cohort, period, at, members, starts, ends, 0 from metrics_cohorts where creator_id = ${creatorId}
  union all select 'scopes', scope_id, null, null, null, trialing, paying, mrr_cents, active_subscriptions from metrics_scopes where creator_id = ${creatorId}
  union all select 'tiers', tier_id, null, null, null, members_all, members_community, mrr_cents, active_subscriptions from metrics_tiers where creator_id = ${creatorId}`;

/**
 * Temporary tables fresh_spells, fresh_members and fresh_counters: a creator's spells, member
 * states and counters as the views and the directory say they are now. `activity: 'folded'`
 * takes the kept day of last activity for members active since the last fold (not folded yet
 * is not drift); 'current' reads every member's from the directory.
 */
async function computeFresh(creatorId: string, activity: 'current' | 'folded', trx: Executor) {
  // A creator's whole history in a few statements: longer than a request may take.
  await sql`set local statement_timeout = '15min'`.execute(trx);
  await sql`create temporary table fresh_spells on commit drop as
    select scope_id, member_id, started_at, ended_at, last from metrics_spell_source where creator_id = ${creatorId}`.execute(trx);
  const since = sql`(select activity_folded_at - ${FOLD_MARGIN} from metrics_scopes where creator_id = ${creatorId} and scope_id = ${ALL_COMMUNITIES})`;
  const activeDay =
    activity === 'current'
      ? sql`(cm.last_active_at at time zone 'UTC')::date`
      : sql`case when cm.last_active_at > ${since} then k.active_day else (cm.last_active_at at time zone 'UTC')::date end`;
  await sql`create temporary table fresh_members on commit drop as
    select v.scope_id, v.member_id, v.trialing, v.home_tier_id, v.tier_mrr, v.tier_active, f.first_started_at, ${activeDay} as active_day
    from metrics_member_source v
    left join (select scope_id, member_id, min(started_at) as first_started_at from fresh_spells group by scope_id, member_id) f
      on f.scope_id = v.scope_id and f.member_id = v.member_id
    left join member_activity cm on cm.creator_id = v.creator_id and cm.member_id = v.member_id
    left join metrics_members k on k.creator_id = v.creator_id and k.scope_id = v.scope_id and k.member_id = v.member_id
    where v.creator_id = ${creatorId}`.execute(trx);
  await sql`analyze fresh_spells`.execute(trx);
  await sql`analyze fresh_members`.execute(trx);
  await sql`create temporary table fresh_counters on commit drop as
    with sp as (
      select 1 as sign, s.scope_id, s.member_id, s.started_at, s.ended_at, s.last, m.first_started_at as first
      from fresh_spells s join fresh_members m on m.scope_id = s.scope_id and m.member_id = s.member_id
    ),
    ms as (select 1 as sign, scope_id, trialing, home_tier_id, tier_mrr, tier_active, active_day from fresh_members),
    ${COUNTER_DELTAS}
    select 'days' as kind, scope_id, day as k1, null::text as k2, null::date as k3, starts::bigint as v1, ends::bigint as v2, final_ends::bigint as v3, active::bigint as v4 from d
    union all select 'cohorts', scope_id, cohort, period, at, members, starts, ends, 0 from c
    union all select 'scopes', scope_id, null, null, null, trialing, paying, mrr_cents, active_subscriptions from sc
    union all select 'tiers', tier_id, null, null, null, members_all, members_community, mrr_cents, active_subscriptions from td`.execute(trx);
}

/** Rows (spells, member states, counters) that differ between the fresh tables and the kept ones. */
async function countDrift(creatorId: string, trx: Executor): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select ((select count(*) from fresh_spells f full join (select * from metrics_spells where creator_id = ${creatorId}) k
               on k.scope_id = f.scope_id and k.member_id = f.member_id and k.started_at = f.started_at
             where (f.ended_at, f.last) is distinct from (k.ended_at, k.last))
          + (select count(*) from fresh_members f full join (select * from metrics_members where creator_id = ${creatorId}) k
               on k.scope_id = f.scope_id and k.member_id = f.member_id
             where (f.trialing, f.home_tier_id, f.tier_mrr, f.tier_active, f.first_started_at, f.active_day)
                   is distinct from (k.trialing, k.home_tier_id, k.tier_mrr, k.tier_active, k.first_started_at, k.active_day))
          + (select count(*) from fresh_counters f full join (${KEPT_COUNTERS(creatorId)}) k
               on k.kind = f.kind and k.scope_id = f.scope_id and k.k1 is not distinct from f.k1 and k.k2 is not distinct from f.k2 and k.k3 is not distinct from f.k3
             where (coalesce(f.v1, 0), coalesce(f.v2, 0), coalesce(f.v3, 0), coalesce(f.v4, 0))
                   <> (coalesce(k.v1, 0), coalesce(k.v2, 0), coalesce(k.v3, 0), coalesce(k.v4, 0))))::int as n`.execute(trx);
  return rows[0]!.n;
}

/** Replaces the kept rows with the fresh ones, wholesale: cheaper than patching, and the lock keeps every writer out meanwhile. */
async function applyFresh(creatorId: string, trx: Executor) {
  const nonzero = sql`(v1, v2, v3, v4) <> (0, 0, 0, 0)`;
  await sql`delete from metrics_spells where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_spells (creator_id, scope_id, member_id, started_at, ended_at, last)
    select ${creatorId}, scope_id, member_id, started_at, ended_at, last from fresh_spells`.execute(trx);
  await sql`delete from metrics_members where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_members (creator_id, scope_id, member_id, trialing, home_tier_id, tier_mrr, tier_active, first_started_at, active_day)
    select ${creatorId}, scope_id, member_id, trialing, home_tier_id, tier_mrr, tier_active, first_started_at, active_day from fresh_members`.execute(trx);
  await sql`delete from metrics_days where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_days (creator_id, scope_id, day, starts, ends, final_ends, active)
    select ${creatorId}, scope_id, k1, v1, v2, v3, v4 from fresh_counters where kind = 'days' and ${nonzero}`.execute(trx);
  await sql`delete from metrics_cohorts where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_cohorts (creator_id, scope_id, period, cohort, at, members, starts, ends)
    select ${creatorId}, scope_id, k2, k1, k3, v1, v2, v3 from fresh_counters where kind = 'cohorts' and ${nonzero}`.execute(trx);
  await sql`update metrics_scopes set trialing = 0, paying = 0, mrr_cents = 0, active_subscriptions = 0 where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_scopes as t (creator_id, scope_id, trialing, paying, mrr_cents, active_subscriptions)
    select ${creatorId}, scope_id, v1, v2, v3, v4 from fresh_counters where kind = 'scopes'
    on conflict (creator_id, scope_id) do update
      set trialing = excluded.trialing, paying = excluded.paying, mrr_cents = excluded.mrr_cents, active_subscriptions = excluded.active_subscriptions`.execute(trx);
  await sql`delete from metrics_tiers where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_tiers (creator_id, tier_id, mrr_cents, members_all, members_community, active_subscriptions)
    select ${creatorId}, scope_id, v3, v1, v2, v4 from fresh_counters where kind = 'tiers' and ${nonzero}`.execute(trx);
}

const dropFresh = (trx: Executor) => sql`drop table fresh_counters, fresh_members, fresh_spells`.execute(trx);

/**
 * Recomputes all of a creator's counters, spells and member states from the mirror and the
 * member directory's activity and replaces the kept ones (a creator's first counters; data
 * written around the mirror, as the scale seeders do; drift that `check` found). Returns how
 * many rows differed: 0 when the kept counters were right. Holds the creator's counters lock
 * throughout, so no change is applied meanwhile; at a million subscriptions it takes 1.5 min.
 */
export async function rebuild(creatorId: string, trx: Executor, opts: { locked?: boolean; now?: () => Date } = {}): Promise<number> {
  // Taken before reading anything (on the clock activity is stamped with), so the activity read
  // below is at least as new as the watermark says.
  const foldedAt = (opts.now ?? (() => new Date()))();
  if (!opts.locked) await lockCreator(creatorId, trx);
  // Activity since the last fold is folded first, so the count below is of real drift only.
  await foldActivity(creatorId, foldedAt, trx);
  await computeFresh(creatorId, 'current', trx);
  const n = await countDrift(creatorId, trx);
  if (n > 0) await applyFresh(creatorId, trx);
  await dropFresh(trx);
  return n;
}

/**
 * Counts how many of a creator's kept rows differ from a recomputation, writing nothing and
 * taking no lock, so the creator's subscription changes go on meanwhile: run it in a
 * repeatable-read transaction (one snapshot, in which the mirror and the counters agree, as
 * every change moves both in one transaction).
 */
export async function check(creatorId: string, trx: Executor): Promise<number> {
  await computeFresh(creatorId, 'folded', trx);
  const n = await countDrift(creatorId, trx);
  await dropFresh(trx);
  return n;
}
