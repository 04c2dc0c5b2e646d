import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import { runExclusive } from '../db/locks.js';
import { every, type TaskRunner } from './tasks.js';

// One node at a time runs each of these: the others skip a round while its lock is held.
const RECONCILE_LOCK_ID = 7_321_004_118;
const METRICS_HISTORY_LOCK_ID = 7_321_004_119;
const METRICS_FOLD_LOCK_ID = 7_321_004_120;

/** What the scheduled jobs run: the features' own entry points (features.ts builds them). */
export interface JobWork {
  /** Processor events to retry, and events a crashed process had acknowledged but not done. */
  inboxDrain(): Promise<unknown>;
  /** Retention (retention.ts): processed events, expired tokens, outgoing events past retention. */
  purgeRetained(): Promise<unknown>;
  reconcile(): Promise<unknown>;
  /** End-of-day challenge ranks, then challenge.finished for challenges that ended. */
  rankChallenges(): Promise<unknown>;
  fillMetricsHistory(): Promise<unknown>;
  buildMissingCounters(): Promise<unknown>;
  foldActivity(): Promise<unknown>;
  /** Outgoing events due now (events.feature.ts drain). */
  sendEvents(): Promise<unknown>;
  /** Expired Idempotency-Key answers (http/idempotency.ts). */
  purgeIdempotencyKeys(): Promise<unknown>;
  /** Post previews a rule change left stale; `stopping()` ends the pass between batches. */
  refreshPreviews(stopping: () => boolean): Promise<unknown>;
}

export const RETENTION_INTERVAL_MS = 24 * 3600_000;
const INBOX_INTERVAL_MS = 5000;

/**
 * Every scheduled job of a node (DESIGN §1's background work), started by nodes that run
 * jobs (`JOBS`, default on; `npm run worker` runs them and serves no API). Each is safe on
 * several nodes at once: the heavy ones take an advisory lock (runExclusive) and the others
 * skip that round; the rest claim rows with SKIP LOCKED or write what another node wrote
 * the same (a day of history, a rank) once. Returns what stops them all.
 */
export function startJobs({ config, database, logger, tasks, work }: { config: Config; database: DatabaseHandle; logger: Logger; tasks: TaskRunner; work: JobWork }) {
  const stops: Array<() => Promise<void>> = [];
  const repeat = (ms: number, name: string, job: () => Promise<unknown>, atStart = false) => {
    if (ms <= 0) return;
    if (atStart) tasks.run(name, job);
    stops.push(every(ms, job, logger, name));
  };
  const exclusive = (lockId: number, job: () => Promise<unknown>) => () => runExclusive(database, lockId, job);

  repeat(INBOX_INTERVAL_MS, 'webhook inbox', work.inboxDrain);
  repeat(RETENTION_INTERVAL_MS, 'retention purge', work.purgeRetained);
  repeat(config.idempotencyPurgeIntervalMs, 'idempotency key purge', work.purgeIdempotencyKeys);
  repeat(config.reconcileIntervalMs, 'reconcile', exclusive(RECONCILE_LOCK_ID, work.reconcile));
  // Checked at start-up and every few minutes; the work is done once a day per challenge.
  repeat(config.challengeRankingIntervalMs, 'challenge standings', work.rankChallenges, true);
  // A first backfill is heavy, and the other nodes would only redo it: one at a time.
  repeat(config.metricsHistoryIntervalMs, 'metrics history', exclusive(METRICS_HISTORY_LOCK_ID, work.fillMetricsHistory), true);
  if (config.metricsFoldIntervalMs > 0) tasks.run('metrics counters', exclusive(METRICS_FOLD_LOCK_ID, work.buildMissingCounters));
  repeat(config.metricsFoldIntervalMs, 'metrics activity fold', exclusive(METRICS_FOLD_LOCK_ID, work.foldActivity));
  repeat(config.events.pollMs, 'outgoing events', work.sendEvents);
  let stopping = false;
  tasks.run('post previews', () => work.refreshPreviews(() => stopping));

  return {
    /** Long passes stop between batches (called as the server starts closing). */
    halt: () => {
      stopping = true;
    },
    /** No new rounds; resolves once the ones running have ended. */
    stop: async () => {
      stopping = true;
      await Promise.all(stops.map((stop) => stop()));
    },
  };
}
