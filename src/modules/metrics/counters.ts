import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';

/** scope_id of "all of the creator's communities" (migrations/0017). */
export const ALL_COMMUNITIES = '00000000-0000-0000-0000-000000000000';
export const ALL = sql.lit(ALL_COMMUNITIES);

/**
 * What a set of spells and member states adds to the counters, as CTEs over two relations the
 * caller defines: `sp (sign, scope_id, member_id, started_at, ended_at, last, first)` — spells,
 * each with whether it is the member's last in the scope and when their first began — and
 * `ms (sign, scope_id, trialing, home_tier_id, tier_mrr, tier_active, active_day)` — member states. Signs are +1 (a
 * spell or state that now holds) or −1 (one that no longer does), so the same text computes a
 * member's change (after − before) and a creator's totals from scratch (all +1).
 */
export const COUNTER_DELTAS = sql`
  d as (
    select scope_id, day, sum(starts)::int as starts, sum(ends)::int as ends, sum(final_ends)::int as final_ends, sum(active)::int as active from (
      select scope_id, (started_at at time zone 'UTC')::date as day, sign as starts, 0 as ends, 0 as final_ends, 0 as active from sp
      union all
      select scope_id, (ended_at at time zone 'UTC')::date, 0, sign, case when last then sign else 0 end, 0 from sp where ended_at is not null
      union all
      -- A live member (paying or trialing) on the day of their last activity.
      select scope_id, active_day, 0, 0, 0, sign from ms where (trialing or home_tier_id is not null) and active_day is not null
    ) x group by scope_id, day
  ),
  c as (
    select scope_id, period, cohort, at, sum(members)::int as members, sum(starts)::int as starts, sum(ends)::int as ends from (
      select sp.scope_id, p.period, period_start(p.period, sp.first) as cohort, period_start(p.period, sp.started_at) as at,
             case when sp.started_at = sp.first then sp.sign else 0 end as members, sp.sign as starts, 0 as ends
      from sp cross join (values ('week'), ('month')) as p(period)
      union all
      select sp.scope_id, p.period, period_start(p.period, sp.first), period_start(p.period, sp.ended_at), 0, 0, sp.sign
      from sp cross join (values ('week'), ('month')) as p(period) where sp.ended_at is not null
    ) x group by scope_id, period, cohort, at
  ),
  sc as (
    select scope_id, sum(case when trialing then sign else 0 end)::int as trialing,
           sum(case when home_tier_id is not null then sign else 0 end)::int as paying,
           coalesce(sum(sign * (select sum(t.value::bigint) from jsonb_each_text(ms.tier_mrr) as t)), 0)::bigint as mrr_cents,
           coalesce(sum(sign * (select sum(t.value::int) from jsonb_each_text(ms.tier_active) as t)), 0)::int as active_subscriptions
    from ms group by scope_id
  ),
  td as (
    select tier_id, sum(mrr)::bigint as mrr_cents, sum(all_m)::int as members_all, sum(community_m)::int as members_community,
           sum(active)::int as active_subscriptions from (
      select home_tier_id as tier_id, 0 as mrr, case when scope_id = ${ALL} then sign else 0 end as all_m,
             case when scope_id <> ${ALL} then sign else 0 end as community_m, 0 as active
      from ms where home_tier_id is not null
      union all
      select t.key::uuid, sign * t.value::bigint, 0, 0, 0 from ms cross join lateral jsonb_each_text(ms.tier_mrr) as t where ms.tier_mrr is not null
      union all
      select t.key::uuid, 0, 0, 0, sign * t.value::int from ms cross join lateral jsonb_each_text(ms.tier_active) as t where ms.tier_active is not null
    ) x group by tier_id
  )`;

/**
 * Every change of a creator's counters happens under one row lock (the creator's "all"
 * scope row): a member's before-state is read after it is granted, so two members changing
 * at once never apply a difference computed from a stale before. Webhooks of one creator
 * queue here for the end of their transaction; a creator's changes are a few a second at most.
 */
export async function lockCreator(creatorId: string, trx: Executor): Promise<{ created: boolean }> {
  // xmax = 0 only on a freshly inserted row version: the creator had no counters yet.
  const { rows } = await sql<{ created: boolean }>`insert into metrics_scopes as s (creator_id, scope_id) values (${creatorId}, ${ALL})
    on conflict (creator_id, scope_id) do update set trialing = s.trialing
    returning (xmax = 0) as created`.execute(trx);
  return rows[0]!;
}

/**
 * How far before the last fold activity is still looked at: an activity is stamped when its
 * request starts and committed within a statement timeout or so, so one stamped just before a
 * fold may become visible just after it.
 */
export const FOLD_MARGIN = sql`interval '5 minutes'`;

/**
 * Moves the members active since the creator's last fold (less the margin) to the day of their
 * latest activity in metrics_days.active and records `foldedAt` as the new watermark. The caller
 * holds the creator's counters lock.
 */
export async function foldActivity(creatorId: string, foldedAt: Date, trx: Executor): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with since as (
      select coalesce(activity_folded_at - ${FOLD_MARGIN}, '-infinity') as t from metrics_scopes where creator_id = ${creatorId} and scope_id = ${ALL}
    ),
    recent as (
      select member_id, (last_active_at at time zone 'UTC')::date as day from member_activity
      where creator_id = ${creatorId} and last_active_at > (select t from since)
    ),
    changed as materialized (
      select m.scope_id, m.member_id, m.active_day as old_day, r.day as new_day, (m.trialing or m.home_tier_id is not null) as live
      from recent r join metrics_members m on m.creator_id = ${creatorId} and m.member_id = r.member_id
      where m.active_day is distinct from r.day
    ),
    members_moved as (
      update metrics_members m set active_day = c.new_day from changed c
      where m.creator_id = ${creatorId} and m.scope_id = c.scope_id and m.member_id = c.member_id
    ),
    days_moved as (
      insert into metrics_days as t (creator_id, scope_id, day, active)
      select ${creatorId}, scope_id, day, sum(delta)::int from (
        select scope_id, new_day as day, 1 as delta from changed where live and new_day is not null
        union all
        select scope_id, old_day, -1 from changed where live and old_day is not null
      ) x group by scope_id, day having sum(delta) <> 0 order by scope_id, day
      on conflict (creator_id, scope_id, day) do update set active = t.active + excluded.active
    )
    select count(*)::int as n from changed`.execute(trx);
  await sql`update metrics_scopes set activity_folded_at = ${foldedAt} where creator_id = ${creatorId} and scope_id = ${ALL}`.execute(trx);
  return rows[0]!.n;
}
