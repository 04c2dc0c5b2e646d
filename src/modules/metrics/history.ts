import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';
import { ALL_COMMUNITIES } from './counters.js';
import { mirroredSince, nextDay } from './history-day.js';
import { dayFigures, type DayTotals, type HistoryRow } from './history-pass.js';
import type { Scope } from './metrics.repo.js';

const DAY_MS = 86_400_000;
/** How far back a scope's first snapshot reaches (the job's backfill; a read may store any day of its range). */
export const HISTORY_MAX_DAYS = 90;
/**
 * What one read may compute before answering, in the units of the one-pass query
 * (history-pass.ts): cost = the scope's subscriptions + the days asked for. The pass reads every
 * subscription of the scope once whatever the days (~7 dated changes each, sorted by member),
 * and each day adds one row to sum: at ~1.4 s per 100,000 subscriptions of one PostgreSQL core
 * (bench/metrics.ts: 27 s for the 2M subscriptions of a 1M-subscription creator's four scopes,
 * 90 days), 200,000 is ~3 s. A read stores the most recent missing days that fit after
 * the scope's subscriptions (for all but the largest creators, all of them, up to the 366 a read
 * may ask for); a scope of more than the budget's subscriptions gets none on a read (fewer days
 * would not make its pass cheaper), and the job fills its last HISTORY_MAX_DAYS. Days that follow
 * a stored day cost far less (history-day.ts); the budget does not count on it.
 */
export const READ_BACKFILL_COST = 200_000;

/**
 * The most days computed one from the other after a stored day (history-day.ts); more go in one
 * pass. A day costs its changes, the pass the scope's subscriptions: at the bench's churn (1M
 * subscriptions, ~13,000 starts a day) a day is ~1/20 of a pass, so a week missed by a stopped
 * node is cheaper day by day and a 90-day backfill is not.
 */
export const CHAIN_MAX_DAYS = 7;

export const utcDay = (d: Date) => d.toISOString().slice(0, 10);
const dayBefore = (day: string) => utcDay(new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS));

export type { HistoryRow };

/**
 * The daily metrics history (issue #15): for every creator, all communities together and each
 * one, a row per finished UTC day with the figures as they stood at its end. A job (at
 * start-up and every METRICS_HISTORY_INTERVAL_MS, on one node at a time: an advisory lock,
 * features.ts) fills the days of the last HISTORY_MAX_DAYS a scope is missing, up to yesterday:
 * a node down for a week backfills the week. A read fills the missing days of its own range
 * first (within READ_BACKFILL_COST), so a new creator's chart does not wait for the job
 * (issue #26). The unique key (creator, community, day) makes a day's row the first writer's,
 * the job's or a read's; a second writer writes nothing. Only days that have ended are
 * written, so no row holds figures from before its day's end; today is never stored.
 *
 * A day that follows a stored day (the job's steady state: one new day per scope per day, or
 * up to CHAIN_MAX_DAYS a stopped node missed) is that day plus its changes (history-day.ts):
 * O(the day's starts, ends, trial ends and recorded prices), not O(subscriptions). Other days —
 * a backfill with no stored day before it or longer than CHAIN_MAX_DAYS, the day after a row
 * stored before migration 0033, or after the mirror recorded a change dated in an already
 * stored day (a late cancellation, a subscription first seen after its day was stored) — are
 * reconstructed from the subscription mirror as it is now,
 * in one pass over the scope's subscriptions whatever the number of days (history-pass.ts),
 * which is what a day from the day before is held equal to: a subscription was live
 * from `created_at` until it ended (`ended_at`, else `canceled_at`) or lapsed into a status that
 * is not live (`lapsed_at`: unpaid, paused, incomplete…), trialing until `trial_end`, and paying
 * the rest of the time, in MRR at the price recorded for it that day (subscription_changes). The
 * mirror keeps no past_due spells, so a day's past_due members count as paying (as MRR counts
 * them); a price is known from the day the mirror recorded it (migration 0013 on; its billing
 * period from 0031 on), and a day before a subscription's first record shows its earliest
 * recorded price. Days written while they happen (the job runs every few minutes) are exact to
 * that rule.
 */
export function createMetricsHistory({ db, now, readBackfillCost = READ_BACKFILL_COST }: { db: Db; now: () => Date; readBackfillCost?: number }) {
  /** A metrics_daily row's scope, written as its unique index (metrics_daily_key) is, so a probe is one index lookup. */
  const sameScope = (s: Scope, column: RawBuilder<unknown>) =>
    sql<boolean>`coalesce(${column}, ${ALL_COMMUNITIES}::uuid) = ${s.communityId ?? ALL_COMMUNITIES}::uuid`;
  const inScope = (s: Scope) =>
    sql`s.creator_id = ${s.creatorId} and (${s.communityId ?? null}::uuid is null or s.community_id = ${s.communityId ?? null}::uuid)`;

  /** The figures at the end of each of `days` (UTC dates), one row per day, in one pass (history-pass.ts). */
  const figuresAt = (scope: Scope, days: string[], trx: Executor): Promise<HistoryRow[]> => dayFigures(scope, days, trx);

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

  /** A stored day with the running counts the next day starts from (rows from before migration 0033 have none), and when it was stored. */
  async function stored(scope: Scope, day: string, trx: Executor): Promise<(DayTotals & { created_at: Date }) | undefined> {
    return trx
      .selectFrom('metrics_daily')
      .select([sql<string>`day::text`.as('day'), 'mrr_cents', 'active_subscribers', 'trialing', 'new_subscribers', 'lost_subscribers', 'churn_rate_30d'])
      .select([sql<number>`lost_30d`.as('lost_30d'), sql<number>`base_30d`.as('base_30d'), 'created_at'])
      .where('creator_id', '=', scope.creatorId)
      .where(sameScope(scope, sql`community_id`))
      .where('day', '=', day)
      .where('lost_30d', 'is not', null)
      .where('base_30d', 'is not', null)
      .executeTakeFirst();
  }

  /**
   * The figures of `days` (ended, oldest first): each from the day before and its changes
   * (history-day.ts) when they are at most CHAIN_MAX_DAYS, follow a stored day that has its
   * running counts, and the mirror wrote nothing since that the stored days did not see; else
   * all in one pass (history-pass.ts).
   */
  async function compute(scope: Scope, days: string[], trx: Executor): Promise<DayTotals[]> {
    const prev = await stored(scope, dayBefore(days[0]!), trx);
    const consecutive = days.every((d, i) => i === 0 || dayBefore(d) === days[i - 1]);
    if (!prev || !consecutive || days.length > CHAIN_MAX_DAYS || (await mirroredSince(scope, days[0]!, prev.created_at, trx))) return dayFigures(scope, days, trx);
    const rows: DayTotals[] = [];
    let last: DayTotals = prev;
    for (const day of days) rows.push((last = await nextDay(scope, day, last, trx)));
    return rows;
  }

  /**
   * Computes `days` (all ended) and stores them; a day another writer stored meanwhile is kept
   * as it is. In one transaction, so a row's created_at (its start) is no later than what its
   * figures saw: the next day's check of what the mirror wrote since (history-day.ts) counts on it.
   */
  async function write(scope: Scope, days: string[]): Promise<number> {
    if (!days.length) return 0;
    return db.transaction().execute(async (trx) => {
      const rows = await compute(scope, [...days].sort(), trx);
      const { numAffectedRows } = await sql`insert into metrics_daily
          (creator_id, community_id, day, mrr_cents, active_subscribers, trialing, new_subscribers, lost_subscribers, churn_rate_30d, lost_30d, base_30d)
        select ${scope.creatorId}, ${scope.communityId ?? null}::uuid, x.day, x.mrr, x.active, x.trialing, x.new, x.lost, x.churn, x.lost_30d, x.base_30d
        from unnest(${rows.map((r) => r.day)}::date[], ${rows.map((r) => r.mrr_cents)}::bigint[], ${rows.map((r) => r.active_subscribers)}::int[],
                    ${rows.map((r) => r.trialing)}::int[], ${rows.map((r) => r.new_subscribers)}::int[], ${rows.map((r) => r.lost_subscribers)}::int[],
                    ${rows.map((r) => r.churn_rate_30d)}::numeric[], ${rows.map((r) => r.lost_30d)}::int[], ${rows.map((r) => r.base_30d)}::int[])
          as x(day, mrr, active, trialing, new, lost, churn, lost_30d, base_30d)
        on conflict do nothing`.execute(trx);
      return Number(numAffectedRows ?? 0);
    });
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
     * them when subscriptions + days is within READ_BACKFILL_COST, else the most recent that
     * fit (none at all for a scope of more than READ_BACKFILL_COST subscriptions). Answers how
     * many were written and how many are left to the job.
     */
    async backfill(scope: Scope, from: string, to: string): Promise<{ written: number; left: number }> {
      const yesterday = dayBefore(utcDay(now()));
      const days = await missingDays(scope, from, to < yesterday ? to : yesterday);
      if (!days.length) return { written: 0, left: 0 };
      const fit = readBackfillCost - (await subscriptionsUpTo(scope, readBackfillCost + 1));
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
