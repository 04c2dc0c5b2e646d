import { CompiledQuery, sql, type Kysely } from 'kysely';
import { createCombiner } from '../../db/combiner.js';
import type { Executor } from '../../db/tx.js';
import type { Database } from '../../db/types.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import type { KeyRow } from '../../http/idempotency-store.js';
import { LOG_BATCH } from './log-batch.js';
import type { PrKind } from './prs.js';
import type { NewLog } from './workout-logs.repo.js';

/**
 * Bumps the member's training version inside `trx` and so holds its row lock until the
 * transaction ends: changes that replay history (deletion, a back-dated log, a challenge
 * score recomputed) run one at a time per member, and a concurrent logging statement finds
 * the version moved.
 */
export async function lockHistory(memberId: string, trx: Executor): Promise<void> {
  await sql`insert into member_training as t (member_id, version) values (${memberId}, 1)
    on conflict (member_id) do update set version = t.version + 1, updated_at = now()`.execute(trx);
}

export interface LogPlace {
  creatorId: string;
  communityId: string;
  live: boolean;
}

export type LogOutcome = 'written' | 'conflict' | 'later' | 'refused' | 'replay';

export interface LogStatementResult {
  /**
   * written; conflict: the member's history moved meanwhile; later: back-dated; refused: not
   * valid (see the lookups); replay: the log's Idempotency-Key holds an answer (`stored`).
   */
  outcome: LogOutcome;
  /** Exercises of the log the member may use, with their names. */
  visible: Map<string, string>;
  /** The workout named (undefined: none named; null: not found or deleted). */
  workout: LogPlace | null | undefined;
  community: Omit<LogPlace, 'communityId'> | null | undefined;
  prs: Array<{ exerciseId: string; kind: PrKind; value: number; previousValue: number; position: number }>;
  /** replay: the row of the log's key. */
  stored?: KeyRow;
}

const parsed = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

/** What the statement found for a log (a row of it, or the data stored under a key), read. */
function resultOf(row: Record<string, unknown>, log: Pick<NewLog, 'workout_id' | 'community_id'>): Omit<LogStatementResult, 'outcome'> {
  return {
    visible: new Map(parsed<Array<[string, string]>>(row.visible)),
    workout: log.workout_id ? (parsed<LogPlace | null>(row.workout) ?? null) : undefined,
    community: log.community_id ? (parsed<LogPlace | null>(row.community) ?? null) : undefined,
    prs: parsed<Array<[string, PrKind, number, number, number]>>(row.prs).map(([exerciseId, kind, value, previousValue, position]) => ({
      exerciseId,
      kind,
      value,
      previousValue,
      position,
    })),
  };
}

/**
 * A written log's answer as its key stores it (state 'data', log-batch.ts `stored`): the
 * log's id, when it was logged, and what the statement found for it. The request's body
 * (the same on a retry: its hash is checked) and these make the answer again.
 */
export function storedLog(data: string, log: Pick<NewLog, 'workout_id' | 'community_id'>) {
  const row = JSON.parse(data) as Record<string, unknown> & { id: string; created_at: string };
  return { id: row.id, createdAt: new Date(row.created_at), result: { outcome: 'written' as const, ...resultOf(row, log) } };
}

export interface LoggingOptions {
  /** Logging statements running at once (each holds a pooled connection); more logs wait and join a batch. */
  maxInFlight?: number;
  maxBatch?: number;
  /** Told each batch's size (metrics). */
  onBatch?: (size: number) => void;
}

/** A log to write, and when its request carries an Idempotency-Key, the key its answer is stored under. */
export interface LogItem {
  log: NewLog;
  valid: boolean;
  keyed?: KeyedAnswer<unknown>;
}

export function createLoggingRepo(db: Kysely<Database>, { maxInFlight = 2, maxBatch = 32, onBatch }: LoggingOptions = {}) {
  const repo = {
    /**
     * Logs each item's log if `valid` (the checks made without the database passed), every
     * exercise is one the member may use, the workout or community named exists and the
     * member holds a live subscription to it, no working set of these exercises is dated
     * after it, and the member's history did not move since the statement's snapshot; a
     * keyed log, unless its key holds an answer (then `replay`), with its answer stored.
     * One statement for all: items must be of distinct members (the combiner sees to it).
     * A key another request is storing meanwhile is waited for (its lock), then replayed.
     */
    async logBatch(items: LogItem[], trx: Executor = db): Promise<LogStatementResult[]> {
      const logs = items.map((i) => i.log);
      const sets = logs.flatMap((l, n) => l.sets.map((s) => ({ ...s, n: n + 1 })));
      const keys = items.map((i) => i.keyed?.identity);
      const { rows } = await trx.executeQuery<Record<string, unknown>>(
        CompiledQuery.raw(LOG_BATCH, [
          logs.map((l) => l.id),
          logs.map((l) => l.member_id),
          logs.map((l) => l.workout_id),
          logs.map((l) => l.community_id),
          logs.map((l) => l.performed_at),
          logs.map((l) => l.created_at),
          items.map((i) => i.valid),
          sets.map((s) => s.n),
          sets.map((s) => s.position),
          sets.map((s) => s.exerciseId),
          sets.map((s) => s.reps),
          sets.map((s) => s.loadKg),
          sets.map((s) => s.isWarmup),
          sets.map((s) => s.rpe),
          keys.map((k) => k?.scope ?? null),
          keys.map((k) => k?.key ?? null),
          keys.map((k) => k?.hash ?? null),
          keys.find((k) => k)?.ttlHours ?? 24,
        ]),
      );
      const results = rows.map((row, n): LogStatementResult => {
        const outcome = row.outcome as LogOutcome;
        if (outcome === 'replay') {
          return { outcome, visible: new Map(), workout: undefined, community: undefined, prs: [], stored: { ...(row as unknown as KeyRow), expired: false } };
        }
        return { outcome, ...resultOf(row, logs[n]!) };
      });
      items.forEach((item, n) => results[n]!.outcome === 'written' && item.keyed?.stored());
      return results;
    },

    /** The member's training-history lock (lockHistory above). */
    lockHistory,
  };
  // Logs that arrive together share one statement; one member's logs never share one.
  const combiner = createCombiner({ run: (items: LogItem[]) => repo.logBatch(items), key: (i: LogItem) => i.log.member_id, maxBatch, maxInFlight, onBatch });
  return {
    ...repo,
    /** Logs one log as part of the next batch (see logBatch). */
    logNewest: (item: LogItem) => combiner.submit(item),
  };
}

export type LoggingRepo = ReturnType<typeof createLoggingRepo>;
