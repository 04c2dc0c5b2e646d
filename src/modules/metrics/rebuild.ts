import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { COUNTER_DELTAS, foldActivity, lockCreator } from './counters.js';

/** One counter row, keyed (kind, scope or tier, k1..k3), as rebuild compares them. */
const KEPT_COUNTERS = (creatorId: string) => sql`
  select 'days' as kind, scope_id, day as k1, null::text as k2, null::date as k3, starts::bigint as v1, ends::bigint as v2, final_ends::bigint as v3, active::bigint as v4
  from metrics_days where creator_id = ${creatorId}
  union all select 'cohorts', scope_id, cohort, period, at, members, starts, ends, 0 from metrics_cohorts where creator_id = ${creatorId}
  union all select 'scopes', scope_id, null, null, null, trialing, 0, 0, 0 from metrics_scopes where creator_id = ${creatorId}
  union all select 'tiers', tier_id, null, null, null, members_all, members_community, mrr_cents, 0 from metrics_tiers where creator_id = ${creatorId}`;

/**
 * Recomputes all of a creator's counters, spells and member states from the mirror and the
 * member directory's activity, and fixes every row that differs (reconciliation; a creator's
 * first counters; data written around the mirror, as the scale seeders do). Returns the rows
 * it fixed: 0 when the kept counters were right. Holds the creator's counters lock throughout,
 * so no change is applied meanwhile; at a million subscriptions it takes about a minute.
 */
export async function rebuild(creatorId: string, trx: Executor, opts: { locked?: boolean; now?: () => Date } = {}): Promise<number> {
  // Taken before reading anything (on the clock activity is stamped with), so the activity read
  // below is at least as new as the watermark says.
  const foldedAt = (opts.now ?? (() => new Date()))();
  if (!opts.locked) await lockCreator(creatorId, trx);
  // Activity since the last fold is folded first, so the comparison below counts real drift only.
  await foldActivity(creatorId, foldedAt, trx);
  // A creator's whole history in a few statements: longer than a request may take.
  await sql`set local statement_timeout = '15min'`.execute(trx);
  const fixed = async (q: RawBuilder<{ n: number }>) => (await q.execute(trx)).rows[0]!.n;
  const inserted = (r: { numAffectedRows?: bigint }) => Number(r.numAffectedRows ?? 0);
  let n = 0;
  // Spells and member states, as the views and the directory say they are now.
  await sql`create temporary table fresh_spells on commit drop as
    select scope_id, member_id, started_at, ended_at, last from metrics_spell_source where creator_id = ${creatorId}`.execute(trx);
  await sql`create temporary table fresh_members on commit drop as
    select v.scope_id, v.member_id, v.trialing, v.home_tier_id, v.tier_mrr, f.first_started_at, (cm.last_active_at at time zone 'UTC')::date as active_day
    from metrics_member_source v
    left join (select scope_id, member_id, min(started_at) as first_started_at from fresh_spells group by scope_id, member_id) f
      on f.scope_id = v.scope_id and f.member_id = v.member_id
    left join creator_members cm on cm.creator_id = v.creator_id and cm.member_id = v.member_id
    where v.creator_id = ${creatorId}`.execute(trx);
  await sql`analyze fresh_spells`.execute(trx);
  await sql`analyze fresh_members`.execute(trx);
  // A changed row is deleted, then inserted anew by a second statement: the two in one
  // statement would not see each other's work on the same key.
  n += await fixed(sql`with gone as (
      delete from metrics_spells t where t.creator_id = ${creatorId} and not exists (
        select 1 from fresh_spells f where f.scope_id = t.scope_id and f.member_id = t.member_id and f.started_at = t.started_at
          and f.ended_at is not distinct from t.ended_at and f.last = t.last)
      returning 1)
    select count(*)::int as n from gone`);
  n += inserted(
    await sql`insert into metrics_spells (creator_id, scope_id, member_id, started_at, ended_at, last)
      select ${creatorId}, f.scope_id, f.member_id, f.started_at, f.ended_at, f.last from fresh_spells f
      on conflict (creator_id, scope_id, member_id, started_at) do nothing`.execute(trx),
  );
  n += await fixed(sql`with gone as (
      delete from metrics_members t where t.creator_id = ${creatorId} and not exists (
        select 1 from fresh_members f where f.scope_id = t.scope_id and f.member_id = t.member_id
          and (f.trialing, f.home_tier_id, f.tier_mrr, f.first_started_at, f.active_day)
              is not distinct from (t.trialing, t.home_tier_id, t.tier_mrr, t.first_started_at, t.active_day))
      returning 1)
    select count(*)::int as n from gone`);
  n += inserted(
    await sql`insert into metrics_members (creator_id, scope_id, member_id, trialing, home_tier_id, tier_mrr, first_started_at, active_day)
      select ${creatorId}, f.scope_id, f.member_id, f.trialing, f.home_tier_id, f.tier_mrr, f.first_started_at, f.active_day from fresh_members f
      on conflict (creator_id, scope_id, member_id) do nothing`.execute(trx),
  );
  // The counters the fresh spells and states add up to, against the kept ones.
  await sql`create temporary table fresh_counters on commit drop as
    with sp as (
      select 1 as sign, s.scope_id, s.member_id, s.started_at, s.ended_at, s.last, m.first_started_at as first
      from fresh_spells s join fresh_members m on m.scope_id = s.scope_id and m.member_id = s.member_id
    ),
    ms as (select 1 as sign, scope_id, trialing, home_tier_id, tier_mrr, active_day from fresh_members),
    ${COUNTER_DELTAS}
    select 'days' as kind, scope_id, day as k1, null::text as k2, null::date as k3, starts::bigint as v1, ends::bigint as v2, final_ends::bigint as v3, active::bigint as v4 from d
    union all select 'cohorts', scope_id, cohort, period, at, members, starts, ends, 0 from c
    union all select 'scopes', scope_id, null, null, null, trialing, 0, 0, 0 from sc
    union all select 'tiers', tier_id, null, null, null, members_all, members_community, mrr_cents, 0 from td`.execute(trx);
  n += await fixed(sql`with kept as (${KEPT_COUNTERS(creatorId)})
    select count(*)::int as n from fresh_counters f full join kept k
      on k.kind = f.kind and k.scope_id = f.scope_id and k.k1 is not distinct from f.k1 and k.k2 is not distinct from f.k2 and k.k3 is not distinct from f.k3
    where (coalesce(f.v1, 0), coalesce(f.v2, 0), coalesce(f.v3, 0), coalesce(f.v4, 0)) <> (coalesce(k.v1, 0), coalesce(k.v2, 0), coalesce(k.v3, 0), coalesce(k.v4, 0))`);
  // Replaced wholesale: cheaper than patching, and the lock keeps every writer out meanwhile.
  const nonzero = sql`(v1, v2, v3, v4) <> (0, 0, 0, 0)`;
  await sql`delete from metrics_days where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_days (creator_id, scope_id, day, starts, ends, final_ends, active)
    select ${creatorId}, scope_id, k1, v1, v2, v3, v4 from fresh_counters where kind = 'days' and ${nonzero}`.execute(trx);
  await sql`delete from metrics_cohorts where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_cohorts (creator_id, scope_id, period, cohort, at, members, starts, ends)
    select ${creatorId}, scope_id, k2, k1, k3, v1, v2, v3 from fresh_counters where kind = 'cohorts' and ${nonzero}`.execute(trx);
  await sql`update metrics_scopes set trialing = 0 where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_scopes as t (creator_id, scope_id, trialing)
    select ${creatorId}, scope_id, v1 from fresh_counters where kind = 'scopes'
    on conflict (creator_id, scope_id) do update set trialing = excluded.trialing`.execute(trx);
  await sql`delete from metrics_tiers where creator_id = ${creatorId}`.execute(trx);
  await sql`insert into metrics_tiers (creator_id, tier_id, mrr_cents, members_all, members_community)
    select ${creatorId}, scope_id, v3, v1, v2 from fresh_counters where kind = 'tiers' and ${nonzero}`.execute(trx);
  // Every member's activity is folded as of when this began.
  await sql`update metrics_scopes set activity_folded_at = ${foldedAt}
    where creator_id = ${creatorId} and scope_id = '00000000-0000-0000-0000-000000000000'`.execute(trx);
  await sql`drop table fresh_counters, fresh_members, fresh_spells`.execute(trx);
  return n;
}
