import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';
import { ALL_COMMUNITIES } from './counters.js';
import type { Scope } from './metrics.repo.js';

const DAY_MS = 86_400_000;
/**
 * How far back a scope's first snapshot reaches. A backfilled day pairs every subscription of
 * the scope with the day, so depth is bounded: 90 days of a million subscriptions is ~15 min
 * of one PostgreSQL core, once (later runs write one day).
 */
export const HISTORY_MAX_DAYS = 90;
/** Days computed per statement: each pairs every day with every subscription of the scope. */
const CHUNK_DAYS = 31;
/**
 * How many subscription-days (the scope's subscriptions × the days missing) one read may
 * compute before answering: ~2 s of one PostgreSQL core at the rate above. A creator of a few
 * thousand subscriptions gets every missing day of a month at once; a larger one gets the most
 * recent days that fit, and the job fills the rest of the last HISTORY_MAX_DAYS.
 */
export const READ_BACKFILL_PAIRS = 250_000;

export const utcDay = (d: Date) => d.toISOString().slice(0, 10);
const dayBefore = (day: string) => utcDay(new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS));

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
 * The daily metrics history (issue #15): for every creator, all communities together and each
 * one, a row per finished UTC day with the figures as they stood at its end. A job (at
 * start-up and every METRICS_HISTORY_INTERVAL_MS, on one node at a time: an advisory lock,
 * features.ts) fills the days of the last HISTORY_MAX_DAYS a scope is missing, up to yesterday:
 * a node down for a week backfills the week. A read fills the missing days of its own range
 * first (within READ_BACKFILL_PAIRS), so a new creator's chart does not wait for the job
 * (issue #26). The unique key (creator, community, day) makes a day's row the first writer's,
 * the job's or a read's; a second writer writes nothing. Only days that have ended are
 * written, so no row holds figures from before its day's end; today is never stored.
 *
 * A past day is reconstructed from the subscription mirror as it is now: a subscription was
 * live from `created_at` until it ended (`ended_at`, else `canceled_at`) or lapsed into a
 * status that is not live (`lapsed_at`: unpaid, paused, incomplete…), trialing until
 * `trial_end`, and paying (in MRR, at the price it is billed today) the rest of the time. The
 * mirror keeps no past_due spells or price history, so a day's past_due members count as paying
 * (as MRR counts them) and a changed price shows from the start; days written while they
 * happen (the job runs every few minutes) are exact to that rule.
 */
export function createMetricsHistory({ db, now, readBackfillPairs = READ_BACKFILL_PAIRS }: { db: Db; now: () => Date; readBackfillPairs?: number }) {
  /** A metrics_daily row's scope, written as its unique index (metrics_daily_key) is, so a probe is one index lookup. */
  const sameScope = (s: Scope, column: RawBuilder<unknown>) =>
    sql<boolean>`coalesce(${column}, ${ALL_COMMUNITIES}::uuid) = ${s.communityId ?? ALL_COMMUNITIES}::uuid`;
  const inScope = (s: Scope) =>
    sql`s.creator_id = ${s.creatorId} and (${s.communityId ?? null}::uuid is null or s.community_id = ${s.communityId ?? null}::uuid)`;

  /** The figures at the end of each of `days` (UTC dates), one row per day. */
  async function figuresAt(scope: Scope, days: string[], trx: Executor): Promise<HistoryRow[]> {
    const { rows } = await sql<HistoryRow>`
      with d as (select day, (day + 1)::timestamp at time zone 'UTC' as t from unnest(${days}::date[]) as d(day)),
      -- Live from created_at until it ended or lapsed (migrations/0020, as the spells the counters
      -- keep); one that never was live (first seen not live: lapsed at its start) is left out.
      s as (
        select * from (
          select s.member_id, s.price_cents, s.billing_period, s.created_at, s.trial_end,
                 case when s.status = 'canceled' then least(coalesce(s.ended_at, s.canceled_at, s.updated_at), s.lapsed_at)
                      when not subscription_live(s.status) then coalesce(s.lapsed_at, s.updated_at) end as ended_at
          from subscriptions s where ${inScope(scope)}
        ) x where ended_at is null or ended_at > created_at
      ),
      m as (
        select d.day, d.t, s.member_id,
               bool_or(s.created_at < d.t and (s.ended_at is null or s.ended_at > d.t)) as live,
               bool_or(s.created_at < d.t and (s.ended_at is null or s.ended_at > d.t) and not coalesce(s.trial_end > d.t, false)) as paying,
               coalesce(sum(monthly_cents(s.price_cents, s.billing_period))
                 filter (where s.created_at < d.t and (s.ended_at is null or s.ended_at > d.t) and not coalesce(s.trial_end > d.t, false)), 0) as mrr,
               bool_or(s.created_at < d.t - interval '1 day' and (s.ended_at is null or s.ended_at > d.t - interval '1 day')) as live_at_day_start,
               bool_or(s.created_at >= d.t - interval '1 day' and s.created_at < d.t) as started_that_day,
               bool_or(s.created_at < d.t - interval '30 days' and (s.ended_at is null or s.ended_at > d.t - interval '30 days')) as live_at_start,
               bool_or(s.created_at >= d.t - interval '30 days' and s.created_at < d.t) as started_in_window,
               max(s.ended_at) filter (where s.ended_at <= d.t) as last_ended_at
        from d cross join s
        group by d.day, d.t, s.member_id
      ),
      f as (
        select day,
               coalesce(sum(mrr), 0)::bigint as mrr_cents,
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
             round(coalesce(f.lost_30d::numeric / nullif(f.base_30d, 0), 0), 4) as churn_rate_30d
      from d left join f on f.day = d.day order by d.day`.execute(trx);
    return rows;
  }

  /**
   * The days from `from` through `through` (UTC dates, inclusive) a scope has no row for,
   * oldest first; none before its first subscription (nothing to chart there).
   */
  async function missingDays(scope: Scope, from: string, through: string, trx: Executor = db): Promise<string[]> {
    if (from > through) return [];
    const { rows } = await sql<{ day: string }>`
      select g.day::date::text as day
      from (select (min(s.created_at) at time zone 'UTC')::date as first from subscriptions s where ${inScope(scope)}) f
      cross join lateral generate_series(greatest(${from}::date, f.first)::timestamp, ${through}::date::timestamp, interval '1 day') as g(day)
      where f.first is not null
        and not exists (select 1 from metrics_daily m where m.creator_id = ${scope.creatorId}
                          and ${sameScope(scope, sql`m.community_id`)} and m.day = g.day::date)
      order by g.day`.execute(trx);
    return rows.map((r) => r.day);
  }

  /** The scope's subscriptions, counted up to `cap` (a read's budget needs no more). */
  async function subscriptionsUpTo(scope: Scope, cap: number): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from (select 1 from subscriptions s where ${inScope(scope)} limit ${cap}) x`.execute(db);
    return rows[0]!.n;
  }

  /** Computes and stores `days` (all ended), chunk by chunk; a day another writer stored meanwhile is kept as it is. */
  async function write(scope: Scope, days: string[]): Promise<number> {
    let written = 0;
    for (let i = 0; i < days.length; i += CHUNK_DAYS) {
      const rows = await figuresAt(scope, days.slice(i, i + CHUNK_DAYS), db);
      const { numAffectedRows } = await sql`insert into metrics_daily
          (creator_id, community_id, day, mrr_cents, active_subscribers, trialing, new_subscribers, lost_subscribers, churn_rate_30d)
        select ${scope.creatorId}, ${scope.communityId ?? null}::uuid, x.day, x.mrr, x.active, x.trialing, x.new, x.lost, x.churn
        from unnest(${rows.map((r) => r.day)}::date[], ${rows.map((r) => r.mrr_cents)}::bigint[], ${rows.map((r) => r.active_subscribers)}::int[],
                    ${rows.map((r) => r.trialing)}::int[], ${rows.map((r) => r.new_subscribers)}::int[], ${rows.map((r) => r.lost_subscribers)}::int[],
                    ${rows.map((r) => r.churn_rate_30d)}::numeric[]) as x(day, mrr, active, trialing, new, lost, churn)
        on conflict do nothing`.execute(db);
      written += Number(numAffectedRows ?? 0);
    }
    return written;
  }

  async function fill(scope: Scope, today: string): Promise<number> {
    const earliest = utcDay(new Date(Date.parse(`${today}T00:00:00Z`) - HISTORY_MAX_DAYS * DAY_MS));
    return write(scope, await missingDays(scope, earliest, dayBefore(today)));
  }

  return {
    figuresAt,

    /** Fills every scope's missing days through yesterday (one creator's, given one); answers the rows written (0 when already done today). */
    async run(only?: { creatorId: string }): Promise<{ through: string; written: number }> {
      const today = utcDay(now());
      let q = db.selectFrom('communities').select(['creator_id', 'id']).orderBy('creator_id').orderBy('id');
      if (only) q = q.where('creator_id', '=', only.creatorId);
      const scopes = await q.execute();
      const creators = [...new Set(scopes.map((s) => s.creator_id))];
      let written = 0;
      for (const creatorId of creators) {
        written += await fill({ creatorId }, today);
        for (const c of scopes.filter((s) => s.creator_id === creatorId)) written += await fill({ creatorId, communityId: c.id }, today);
      }
      return { through: utcDay(new Date(Date.parse(`${today}T00:00:00Z`) - DAY_MS)), written };
    },

    /**
     * Stores the ended days of [from, to] the scope is missing, before a read answers: all of
     * them when (subscriptions × days) is within READ_BACKFILL_PAIRS, else the most recent
     * that fit (none at all for a scope of more than READ_BACKFILL_PAIRS subscriptions). Answers
     * how many were written and how many are left to the job.
     */
    async backfill(scope: Scope, from: string, to: string): Promise<{ written: number; left: number }> {
      const yesterday = dayBefore(utcDay(now()));
      const days = await missingDays(scope, from, to < yesterday ? to : yesterday);
      if (!days.length) return { written: 0, left: 0 };
      const fit = Math.floor(readBackfillPairs / Math.max(1, await subscriptionsUpTo(scope, readBackfillPairs + 1)));
      const chosen = fit > 0 ? days.slice(-fit) : [];
      return { written: await write(scope, chosen), left: days.length - chosen.length };
    },

    /** Today's starts, ends and last ends of live spells so far: the counters the summary reads (counters.ts), for one day. */
    async dayCounters(scope: Scope, day: string, trx: Executor = db) {
      const { rows } = await sql<{ starts: number; ends: number; final_ends: number }>`
        select starts, ends, final_ends from metrics_days
        where creator_id = ${scope.creatorId} and scope_id = ${scope.communityId ?? ALL_COMMUNITIES} and day = ${day}::date`.execute(trx);
      return { starts: rows[0]?.starts ?? 0, ends: rows[0]?.ends ?? 0, finalEnds: rows[0]?.final_ends ?? 0 };
    },

    /** The rows of a scope between two UTC days (inclusive). */
    async read(scope: Scope, from: string, to: string, trx: Executor = db) {
      return trx
        .selectFrom('metrics_daily')
        .select([sql<string>`day::text`.as('day'), 'mrr_cents', 'active_subscribers', 'trialing', 'new_subscribers', 'lost_subscribers', 'churn_rate_30d'])
        .where('creator_id', '=', scope.creatorId)
        .where(sameScope(scope, sql`community_id`))
        .where('day', '>=', from)
        .where('day', '<=', to)
        .orderBy('day')
        .execute();
    },
  };
}

export type MetricsHistory = ReturnType<typeof createMetricsHistory>;
