import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { Scope } from './metrics.repo.js';

export interface HistoryRow {
  day: string;
  mrr_cents: string;
  active_subscribers: number;
  trialing: number;
  new_subscribers: number;
  lost_subscribers: number;
  churn_rate_30d: string;
}

/**
 * A day's figures and the two running counts its churn rate is the ratio of (members lost in
 * the 30 days, and the base: live 30 days before or new within them), which metrics_daily keeps
 * so the next day can start from it (history-day.ts).
 */
export interface DayTotals extends HistoryRow {
  lost_30d: number;
  base_30d: number;
}

/**
 * What a member is on a day, from their running counts there (see `dayFigures`): `x` is the
 * column prefix of the counts after the day's changes (`a_`) or before them (`b_`).
 */
export const FLAGS: Record<string, (x: string) => string> = {
  live: (x) => `${x}live > 0`,
  paying: (x) => `${x}paying > 0`,
  trialing: (x) => `${x}live > 0 and not ${x}paying > 0`,
  // Started a subscription that day, and was not live as it began.
  added: (x) => `${x}started > 0 and not ${x}live_1 > 0`,
  // A subscription of theirs ended that day (or in the last 30), and they are not live at its end.
  lost: (x) => `${x}ended > 0 and not ${x}live > 0`,
  lost_30d: (x) => `${x}ended_30 > 0 and not ${x}live > 0`,
  // Live 30 days before the day's end, or started within the 30 days: the churn's base.
  base_30d: (x) => `${x}live_30 > 0 or ${x}started_30 > 0`,
};
export const COUNTS = ['live', 'paying', 'live_1', 'live_30', 'started', 'ended', 'started_30', 'ended_30'];
export const raw = (parts: string[]) => sql.raw(parts.join(', '));
/** The change of each member flag over a day, summed over members: from a_ and b_ counts (one row per member and day). */
export const memberDeltas = raw(Object.entries(FLAGS).map(([name, f]) => `sum((${f('a_')})::int - (${f('b_')})::int) as ${name}`));
const runningCounts = raw(COUNTS.flatMap((c) => [`sum(${c}) over w as a_${c}`, `sum(${c}) over w - ${c} as b_${c}`]));
const dayTotals = raw(COUNTS.map((c) => `sum(${c})::int as ${c}`));

/**
 * A row of the running totals (FLAGS' names and `mrr`) as the API's figures, with the churn's
 * two counts.
 */
export const figures = sql.raw(`mrr::bigint as mrr_cents, paying::int as active_subscribers, trialing::int as trialing,
  added::int as new_subscribers, lost::int as lost_subscribers, round(coalesce(lost_30d::numeric / nullif(base_30d, 0), 0), 4) as churn_rate_30d,
  lost_30d::int as lost_30d, base_30d::int as base_30d`);

/** When subscription `s` stopped being live (migrations/0020), null while it is. */
export const endOf = sql`case when s.status = 'canceled' then least(coalesce(s.ended_at, s.canceled_at, s.updated_at), s.lapsed_at)
  when not subscription_live(s.status) then coalesce(s.lapsed_at, s.updated_at) end`;

/**
 * The scope's subscriptions that ever were live, as whole days (see `dayFigures`): `starts`,
 * `ends` (null while live) and `pays`. `narrow` is a further condition on `s`, the subscription.
 */
export const spells = (scope: Scope, narrow: RawBuilder<unknown> = sql`true`) => sql`
  select x.id, x.member_id, x.price_cents, x.billing_period,
         (x.created_at at time zone 'UTC')::date as starts,
         -- The first day whose end (the next midnight) is at or after the instant.
         ((x.ended_at - interval '1 microsecond') at time zone 'UTC')::date as ends,
         greatest((x.created_at at time zone 'UTC')::date, ((x.trial_end - interval '1 microsecond') at time zone 'UTC')::date) as pays
  from (
    select s.id, s.member_id, s.price_cents, s.billing_period, s.created_at, s.trial_end, ${endOf} as ended_at
    from subscriptions s
    where s.creator_id = ${scope.creatorId} and (${scope.communityId ?? null}::uuid is null or s.community_id = ${scope.communityId ?? null}::uuid)
      and ${narrow}
  ) x where x.ended_at is null or x.ended_at > x.created_at`;

/**
 * The changes each subscription of `s` (spells) makes to its member's counts (COUNTS), dated by
 * day, through `last`: started, paying from the trial's end, ended; and a day and 30 days on.
 */
export const memberEvents = (last: string, narrow: RawBuilder<unknown> = sql`true`) => sql`
  select s.member_id, e.*
  from s cross join lateral (values
    (s.starts, 1, 0, 0, 0, 1, 0, 1, 0),
    (s.starts + 1, 0, 0, 1, 0, -1, 0, 0, 0),
    (s.starts + 30, 0, 0, 0, 1, 0, 0, -1, 0),
    (case when s.ends is null or s.pays < s.ends then s.pays end, 0, 1, 0, 0, 0, 0, 0, 0),
    (s.ends, -1, case when s.pays < s.ends then -1 else 0 end, 0, 0, 0, 1, 0, 1),
    (s.ends + 1, 0, 0, -1, 0, 0, -1, 0, 0),
    (s.ends + 30, 0, 0, 0, -1, 0, 0, 0, -1)
  ) as e(day, live, paying, live_1, live_30, started, ended, started_30, ended_30)
  where e.day <= ${last}::date and ${narrow}`;

/**
 * The flags (FLAGS, in their order) of a member whose only subscription in the scope is `s`,
 * as +1/−1 at the days they start and stop holding: with one subscription its counts are 0 or 1
 * and each flag is one span of days. Live [starts, ends); paying [pays, ends) when the trial
 * ends first; trialing [starts, the earlier of pays and ends); added on `starts` alone (not live
 * the day before); lost on `ends` alone and lost_30d for 30 days from it (not live once ended);
 * base_30d [starts, ends + 30) (started within 30 days, or live 30 days before). A null `ends`
 * (still live) leaves a day null, which the caller's `day <= last` drops. Equal to running the
 * member's counts (memberEvents) for such a member, without sorting the events by member.
 */
const oneMemberSpans = sql`values
    (s.starts, 1, 0, 1, 1, 0, 0, 1),
    (s.starts + 1, 0, 0, 0, -1, 0, 0, 0),
    (case when s.ends is null or s.pays < s.ends then s.pays end, 0, 1, -1, 0, 0, 0, 0),
    (s.ends, -1, case when s.pays < s.ends then -1 else 0 end, case when s.pays < s.ends then 0 else -1 end, 0, 1, 1, 0),
    (s.ends + 1, 0, 0, 0, 0, -1, 0, 0),
    (s.ends + 30, 0, 0, 0, 0, 0, -1, -1)`;

/**
 * CTEs `ch`, `prices` and `paid`: each subscription of `s`'s paid days [since, until) (null:
 * unbounded) at one monthly price, from its recorded prices (see `dayFigures`). `each`: the
 * records of a few subscriptions, looked up one subscription at a time (the planner would
 * rather hash every record of the creator, not knowing how few `s` holds).
 */
export const paidPeriods = (scope: Scope, each = false) => sql`
  ch as (
    select c.subscription_id as id, c.id as change_id, c.recorded_at, (c.recorded_at at time zone 'UTC')::date as since,
           monthly_cents(c.price_cents, coalesce(c.billing_period, s.billing_period)) as monthly
    from s ${
      each
        ? sql`cross join lateral (select * from subscription_changes c where c.creator_id = ${scope.creatorId} and c.subscription_id = s.id offset 0) c`
        : sql`join subscription_changes c on c.creator_id = ${scope.creatorId} and c.subscription_id = s.id`
    }
  ),
  -- Monthly price periods [since, until) (null: unbounded) of the subscriptions with records.
  prices as (
    select id, since, lead(since) over (partition by id order by since) as until, monthly
    from (select distinct on (id, since) id, since, monthly from ch order by id, since, recorded_at desc, change_id desc) x
    union all
    (select distinct on (id) id, null, since, monthly from ch order by id, recorded_at, change_id)
  ),
  paid as (
    select greatest(s.pays, p.since) as since, least(s.ends, p.until) as until, coalesce(p.monthly, monthly_cents(s.price_cents, s.billing_period)) as monthly
    from s left join prices p on p.id = s.id
  )`;

/**
 * The figures at the end of each of `days` (UTC dates), one row per day, in one pass over the
 * scope's subscriptions and their recorded prices: O(subscriptions + days), where pairing
 * every subscription with every day was O(subscriptions × days) (~16 s a day at 1M).
 *
 * A day's figures are as they stood at its end, t = the next midnight (UTC), as the pairing
 * had them: a subscription is live over [created_at, end) — its end or lapse (migrations/0020),
 * the same rule as the counters' spells — trialing while `trial_end` > t, paying the rest of
 * its live time; one that ended the instant it began (or before) never was. Over whole days:
 * live on the days [date(created_at), first day whose end reaches `end`), paying from the first
 * day whose end reaches `trial_end`. Each subscription is turned into +1/−1 changes, dated by
 * day, of eight counts of its member (live, paying, live a day and 30 days before, started that
 * day or within 30, ended that day or within 30); summed per member and day and run over the
 * member's days they say what the member was on each day they changed, and a member's flags
 * (FLAGS: distinct members, as a member with two subscriptions counts once) change only on
 * those days. Summed per day and run over the days from the first, those changes give each
 * day's counts. Only a member with two or more subscriptions in the scope needs their counts run
 * over their days (a sort by member); one with a single subscription has flags that are each one
 * span of days (`oneMemberSpans`), summed per day directly (at 1M subscriptions, 27 s for a
 * creator's four scopes against 38 s all sorted: docs/benchmarks.md). The members' counts could
 * come from metrics_spells (live spells kept per scope and member), but it keeps no paying or
 * trialing spells, so everything is read from the subscriptions, in the same pass.
 *
 * MRR is summed per subscription, not per member: the monthly price of each paying day. A
 * price is what `subscription_changes` (migrations/0013, the mirror's record of every state it
 * writes) holds: from the day a change was recorded on, the last recorded that day (the day's
 * figures are its end's), and before a subscription's first record its earliest recorded price
 * (a subscription older than the recording, or written around the mirror as the bench seeds
 * are, has none, and counts at its current price throughout). A change is dated when the mirror
 * recorded it, not when the processor made it (seconds apart while webhooks flow; a later
 * reconciliation dates it at its run). The billing period is recorded with the price from
 * migration 0031 on; an older record counts at the subscription's current period.
 */
export async function dayFigures(scope: Scope, days: string[], trx: Executor): Promise<DayTotals[]> {
  if (!days.length) return [];
  const sorted = [...days].sort();
  const first = sorted[0]!;
  const last = sorted.at(-1)!;
  const { rows } = await sql<DayTotals>`
    with s as (${spells(scope)}),
    -- Members with more than one subscription in the scope: only their flags need their counts run over their days.
    multi as (select member_id from s group by member_id having count(*) > 1),
    -- A subscription's changes to its member's counts, dated by day; those after the range do not matter.
    ev as (${memberEvents(last, sql`s.member_id in (select member_id from multi)`)}),
    md as (select member_id, day, ${dayTotals} from ev group by member_id, day),
    -- The member's counts after (a_) and before (b_) each day they changed on.
    mc as (select member_id, day, ${runningCounts} from md window w as (partition by member_id order by day rows unbounded preceding)),
    ${paidPeriods(scope)},
    changes as (
      select greatest(day, ${first}::date - 1) as day, ${raw(Object.keys(FLAGS))}, 0::bigint as mrr
      from (select day, ${memberDeltas} from mc group by day) m
      union all
      select greatest(e.day, ${first}::date - 1), ${raw(Object.keys(FLAGS))}, 0
      from s cross join lateral (${oneMemberSpans}) as e(day, ${raw(Object.keys(FLAGS))})
      where not exists (select 1 from multi where multi.member_id = s.member_id) and e.day <= ${last}::date
      union all
      select greatest(e.day, ${first}::date - 1), 0, 0, 0, 0, 0, 0, 0, e.mrr
      from paid cross join lateral (values (paid.since, paid.monthly), (paid.until, -paid.monthly)) as e(day, mrr)
      where (paid.until is null or paid.since < paid.until) and e.day <= ${last}::date
      union all
      select g::date, 0, 0, 0, 0, 0, 0, 0, 0 from generate_series(${first}::date, ${last}::date, interval '1 day') as g
    ),
    totals as (
      select day, ${raw(Object.keys(FLAGS).map((k) => `sum(sum(${k})) over w as ${k}`))}, sum(sum(mrr)) over w as mrr
      from changes group by day window w as (order by day rows unbounded preceding)
    )
    select day::text as day, ${figures} from totals where day = any(${sorted}::date[]) order by day`.execute(trx);
  return rows;
}
