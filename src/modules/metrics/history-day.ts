import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { COUNTS, endOf, figures, memberDeltas, memberEvents, paidPeriods, raw, spells, type DayTotals } from './history-pass.js';
import type { Scope } from './metrics.repo.js';

const DAY_MS = 86_400_000;
const midnight = (day: string, plusDays = 0) => new Date(Date.parse(`${day}T00:00:00Z`) + plusDays * DAY_MS).toISOString();
const inScope = (scope: Scope) => sql`s.creator_id = ${scope.creatorId} and (${scope.communityId ?? null}::uuid is null or s.community_id = ${scope.communityId ?? null}::uuid)`;
/** The end of `s` without the updated_at fallback: the key of subscriptions_ended_idx (migrations/0033). */
const indexedEnd = sql`(case when s.status = 'canceled' then least(coalesce(s.ended_at, s.canceled_at), s.lapsed_at) else s.lapsed_at end)`;
/** The counts of a member at the end of the day (a_) and of the day before (b_). */
const countsAt = (day: string) =>
  raw(COUNTS.flatMap((c) => [`coalesce(sum(${c}) filter (where day <= '${day}'::date), 0) as a_${c}`, `coalesce(sum(${c}) filter (where day < '${day}'::date), 0) as b_${c}`]));

/**
 * The figures at the end of `day` (UTC date) from those of the day before, `prev`, plus the
 * day's changes: O(changes of the day), where the one pass (history-pass.ts) reads every
 * subscription of the scope. Equal to the pass on the same mirror (history-pass.test.ts).
 *
 * A day changes the running totals only through the subscriptions with a dated change on it
 * (`memberEvents`: started that day, a day or 30 days before; ended that day, a day or 30 days
 * before; paying from that day) or a price recorded that day. Each is found by an index
 * (migrations/0033); the members of those subscriptions get their flags (FLAGS) at the end of
 * the day and of the day before from all their subscriptions of the scope, and the difference,
 * summed, is the day's change of each member count. MRR changes by the paid periods
 * (`paidPeriods`) that begin or end on the day.
 */
export async function nextDay(scope: Scope, day: string, prev: DayTotals, trx: Executor): Promise<DayTotals> {
  // Changes on the day come from starts and ends on these days (a day and 30 days on).
  const back = [0, 1, 30];
  const from = back.map((n) => midnight(day, -n));
  const to = back.map((n) => midnight(day, 1 - n));
  const community = scope.communityId ?? null;
  const { rows } = await sql<DayTotals>`
    with touched as (
      select s.member_id, s.community_id from unnest(${from}::timestamptz[], ${to}::timestamptz[]) as r(lo, hi)
        join subscriptions s on s.creator_id = ${scope.creatorId} and s.created_at >= r.lo and s.created_at < r.hi
      union all
      -- Ends fall in (midnight, next midnight]: the day whose end reaches them.
      select s.member_id, s.community_id from unnest(${from}::timestamptz[], ${to}::timestamptz[]) as r(lo, hi)
        join subscriptions s on s.creator_id = ${scope.creatorId} and not subscription_live(s.status) and ${indexedEnd} > r.lo and ${indexedEnd} <= r.hi
      union all
      -- The rows whose end is the updated_at fallback (rare: before migration 0020), all of them.
      select s.member_id, s.community_id from subscriptions s where s.creator_id = ${scope.creatorId} and not subscription_live(s.status)
        and ((s.status = 'canceled' and s.ended_at is null and s.canceled_at is null) or (s.status <> 'canceled' and s.lapsed_at is null))
      union all
      select s.member_id, s.community_id from subscriptions s
        where s.creator_id = ${scope.creatorId} and s.trial_end > ${from[0]}::timestamptz and s.trial_end <= ${to[0]}::timestamptz
      union all
      select s.member_id, s.community_id from subscription_changes c join subscriptions s on s.id = c.subscription_id
        where c.creator_id = ${scope.creatorId} and c.recorded_at >= ${from[0]}::timestamptz and c.recorded_at < ${to[0]}::timestamptz
    ),
    -- Every subscription of the touched members (subscriptions_member_idx), as spells.
    s as (${spells(scope, sql`s.member_id in (select t.member_id from touched t where ${community}::uuid is null or t.community_id = ${community}::uuid)`)}),
    ev as (${memberEvents(day)}),
    mc as (select member_id, ${countsAt(day)} from ev group by member_id),
    ${paidPeriods(scope, true)},
    m as (select ${memberDeltas} from mc),
    p as (
      select coalesce(sum(monthly) filter (where since = ${day}::date), 0) - coalesce(sum(monthly) filter (where until = ${day}::date), 0) as mrr
      from paid where until is null or since < until
    ),
    totals as (
      select ${prev.mrr_cents}::bigint + p.mrr as mrr, ${prev.active_subscribers}::int + coalesce(m.paying, 0) as paying,
             ${prev.trialing}::int + coalesce(m.trialing, 0) as trialing, ${prev.new_subscribers}::int + coalesce(m.added, 0) as added,
             ${prev.lost_subscribers}::int + coalesce(m.lost, 0) as lost, ${prev.lost_30d}::int + coalesce(m.lost_30d, 0) as lost_30d,
             ${prev.base_30d}::int + coalesce(m.base_30d, 0) as base_30d
      from m, p
    )
    select ${day}::text as day, ${figures} from totals`.execute(trx);
  return rows[0]!;
}

/**
 * Whether the mirror wrote, since `since` (when the day before `day` was stored, less a minute
 * for writes then in flight), a change a stored day did not see: a subscription new to the
 * mirror that started before `day`, one that ended before it (or no longer has), one alive
 * again after it was not, or a price recorded before it. A day computed from the stored one
 * would carry such a difference to every later day, so the pass computes the day instead
 * (and the pass, like every day stored, sees the mirror as it is). A change the mirror does not
 * record (a trial's end moved, rows written around the mirror) is not seen here.
 */
export async function mirroredSince(scope: Scope, day: string, since: Date, trx: Executor): Promise<boolean> {
  const start = midnight(day);
  const { rows } = await sql<{ late: boolean }>`
    select exists (
      select 1 from subscription_changes c
        join subscriptions s on s.id = c.subscription_id
        left join lateral (
          select subscription_live(p.status) as live from subscription_changes p
          where p.creator_id = ${scope.creatorId} and p.subscription_id = c.subscription_id and p.recorded_at < ${since}::timestamptz - interval '1 minute'
          order by p.recorded_at desc, p.id desc limit 1
        ) b on true
      where c.creator_id = ${scope.creatorId} and c.recorded_at >= ${since}::timestamptz - interval '1 minute' and ${inScope(scope)}
        and (c.recorded_at < ${start}::timestamptz
             or ${endOf} <= ${start}::timestamptz
             or (b.live is null and s.created_at < ${start}::timestamptz)
             or (not b.live and ${endOf} is null))
    ) as late`.execute(trx);
  return rows[0]!.late;
}
