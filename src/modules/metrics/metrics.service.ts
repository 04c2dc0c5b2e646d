import type { Db } from '../../db/client.js';
import { notFound } from '../../http/errors.js';
import type { CommunitiesRepo } from '../communities/communities.repo.js';
import { AppError } from '../../http/errors.js';
import type { MetricsHistory } from './history.js';
import { utcDay } from './history.js';
import type { MetricsRepo, Scope, Window } from './metrics.repo.js';
import { HISTORY_MAX_SPAN_DAYS } from './metrics.schemas.js';

const DAY_MS = 86_400_000;
/** DESIGN §7: the platform keeps 10 % of each charge. */
export const PLATFORM_FEE_PCT = 10;

export interface MetricsDeps {
  db: Db;
  metrics: MetricsRepo;
  communities: CommunitiesRepo;
  history: MetricsHistory;
  now: () => Date;
}

/** A fraction to 4 decimals; 0 over 0 is 0 (a creator with no members has no churn). */
const fraction = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);

export function windowAt(now: Date): Window {
  return {
    now,
    from: new Date(now.getTime() - 30 * DAY_MS),
    monthStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    nextMonthStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/** `start` moved by `n` periods (UTC). */
function shift(start: Date, period: 'week' | 'month', n: number): Date {
  if (period === 'week') return new Date(start.getTime() + n * 7 * DAY_MS);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1));
}

/** The starts of the `count` periods ending with the one holding `at`, oldest first (weeks from Monday 00:00 UTC). */
export function periodStarts(at: Date, period: 'week' | 'month', count: number): Date[] {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  const current = period === 'week' ? new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * DAY_MS) : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  return Array.from({ length: count }, (_, i) => shift(current, period, i - count + 1));
}

/** The creator's dashboard figures (DESIGN §7), for all communities or one. */
export function createMetricsService({ db, metrics, communities, history, now }: MetricsDeps) {
  /** One read-only snapshot, so the figures agree with each other (repeatable read). */
  async function figures(scope: Scope, w: Window) {
    return db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const subscribers = await metrics.subscribers(scope, w, trx);
        const tierMix = await metrics.tierMix(scope, trx);
        const revenue = await metrics.monthRevenue(scope, w, trx);
        const communitiesCount = scope.communityId ? 1 : await metrics.communitiesCount(scope.creatorId, trx);
        const live = subscribers.active_subscribers + subscribers.trialing;
        return {
          communities_count: communitiesCount,
          active_subscribers: subscribers.active_subscribers,
          trialing: subscribers.trialing,
          mrr_cents: Number(subscribers.mrr_cents),
          this_month_revenue_cents: Number(revenue),
          platform_fee_pct: PLATFORM_FEE_PCT,
          churn_rate_30d: fraction(subscribers.lost_subscribers, subscribers.live_at_start + subscribers.new_subscribers),
          engagement_rate_30d: fraction(subscribers.engaged, live),
          tier_mix: tierMix.map((t) => ({ tier_id: t.tier_id, name: t.name, members: t.members, mrr_cents: Number(t.mrr_cents) })),
          growth_30d: {
            new_subscribers: subscribers.new_subscribers,
            lost_subscribers: subscribers.lost_subscribers,
            net_growth: subscribers.new_subscribers - subscribers.lost_subscribers,
          },
        };
      });
  }

  /**
   * Today's history entry: the summary's figures now (one snapshot, as `figures`), and the day's
   * new and lost members from its counters (new = lost + the change in live members, as the
   * 30-day window derives them).
   */
  async function todaySoFar(scope: Scope, at: Date, today: string) {
    return db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const s = await metrics.subscribers(scope, windowAt(at), trx);
        const d = await history.dayCounters(scope, today, trx);
        return {
          day: today,
          partial: true,
          mrr_cents: Number(s.mrr_cents),
          active_subscribers: s.active_subscribers,
          trialing: s.trialing,
          // Never below 0 with consistent counters; the floor keeps a drifted counter (rebuild.ts check) from breaking the answer's contract.
          new_subscribers: Math.max(0, d.finalEnds + d.starts - d.ends),
          lost_subscribers: d.finalEnds,
          churn_rate_30d: fraction(s.lost_subscribers, s.live_at_start + s.new_subscribers),
        };
      });
  }

  return {
    /**
     * Retention cohorts (DESIGN §7): members by the period of their first subscription, the
     * share still holding one at the end of each later period, the current one measured now.
     */
    async cohorts(creatorId: string, query: { community_id?: string; period: 'week' | 'month'; periods: number }) {
      if (query.community_id && !(await communities.findStatus(creatorId, query.community_id))) throw notFound('Community');
      const at = now();
      const starts = periodStarts(at, query.period, query.periods);
      const ends = starts.map((_, i) => starts[i + 1] ?? shift(starts[i]!, query.period, 1));
      const { buckets, fixes } = await metrics.cohortCells({ creatorId, communityId: query.community_id }, query.period, starts, ends, at);
      const day = (d: Date) => d.toISOString().slice(0, 10);
      const keys = starts.map(day);
      const endKeys = ends.map((e) => e.getTime());
      return {
        period: query.period,
        cohorts: starts.map((start, i) => {
          const own = buckets.filter((b) => b.cohort === keys[i]);
          const size = own.find((b) => b.at === keys[i])?.members ?? 0;
          if (size === 0) return { cohort_start: start.toISOString(), size, retention_pct: [] };
          const later: number[] = [];
          for (let k = i + 1; k < starts.length; k++) {
            let live = own.filter((b) => b.at <= keys[k]!).reduce((n, b) => n + b.starts - b.ends, 0);
            const current = k === starts.length - 1;
            for (const f of fixes) {
              if (f.cohort !== keys[i]) continue;
              if (current ? f.at_ms === null : f.at_ms === endKeys[k]) live += f.delta;
            }
            later.push(Math.round((live * 1000) / size) / 10);
          }
          return { cohort_start: start.toISOString(), size, retention_pct: [100, ...later] };
        }),
      };
    },

    /**
     * The daily history (DESIGN §7): the stored days of the range, oldest first, the missing
     * ended ones computed and stored first (history.ts backfill), and, when the range holds
     * today, today so far from the counters the summary reads, `partial: true`.
     */
    async history(creatorId: string, query: { from?: string; to?: string; community_id?: string }) {
      if (query.community_id && !(await communities.findStatus(creatorId, query.community_id))) throw notFound('Community');
      const at = now();
      const today = utcDay(at);
      const to = query.to ?? today;
      const from = query.from ?? utcDay(new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS));
      const span = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
      if (span < 1) throw new AppError('validation_error', 'The range is not valid.', [{ field: 'from', message: `must not be after to (${to})` }]);
      if (span > HISTORY_MAX_SPAN_DAYS) throw new AppError('validation_error', 'The range is too long.', [{ field: 'from', message: `the range spans ${span} days; at most ${HISTORY_MAX_SPAN_DAYS} a request` }]);
      const scope = { creatorId, communityId: query.community_id };
      let rows = await history.read(scope, from, to);
      // Every ended day of the range stored (the usual case once the job has run): nothing to
      // look for. Otherwise the missing ones are computed and stored first, and the range read
      // again (whoever stored them: this read, or the job or another read meanwhile).
      const yesterday = utcDay(new Date(Date.parse(`${today}T00:00:00Z`) - DAY_MS));
      const lastEnded = to < yesterday ? to : yesterday;
      const ended = lastEnded < from ? 0 : (Date.parse(`${lastEnded}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
      if (rows.length < ended) {
        await history.backfill(scope, from, to);
        rows = await history.read(scope, from, to);
      }
      const days = rows.map((r) => ({
        day: r.day,
        partial: false,
        mrr_cents: Number(r.mrr_cents),
        active_subscribers: r.active_subscribers,
        trialing: r.trialing,
        new_subscribers: r.new_subscribers,
        lost_subscribers: r.lost_subscribers,
        churn_rate_30d: Number(r.churn_rate_30d),
      }));
      if (from <= today && today <= to) days.push(await todaySoFar(scope, at, today));
      return { community_id: query.community_id ?? null, from, to, days };
    },

    async summary(creatorId: string) {
      return figures({ creatorId }, windowAt(now()));
    },

    async community(creatorId: string, communityId: string) {
      if (!(await communities.findStatus(creatorId, communityId))) throw notFound('Community');
      const w = windowAt(now());
      const [base, engagement, challenges] = await Promise.all([
        figures({ creatorId, communityId }, w),
        metrics.feedEngagement(communityId, w),
        metrics.topChallenges(communityId, w, 3),
      ]);
      return { community_id: communityId, ...base, engagement_30d: engagement, top_challenges: challenges };
    },
  };
}

export type MetricsService = ReturnType<typeof createMetricsService>;
