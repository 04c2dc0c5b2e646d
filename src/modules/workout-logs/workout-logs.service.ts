import type { Static } from '@sinclair/typebox';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, type Executor } from '../../db/tx.js';
import { AppError, notFound, type ErrorDetail } from '../../http/errors.js';
import { KeyTaken, type KeyedAnswer } from '../../http/idempotency.js';
import type { KeyRow } from '../../http/idempotency-store.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import { createActivityRepo } from '../activity/activity.js';
import { rescoreMember } from '../challenges/scores.js';
import { hasAtMostTwoDecimals } from '../programs/programs.service.js';
import { displayValue, PR_KINDS, recompute, type Bests, type PrFound, type PrKind } from './prs.js';
import { storedLog, type LoggingRepo, type LogItem, type LogStatementResult } from './logging.repo.js';
import type { HolderRow, NewLog, NewSet, WorkoutLogRow, WorkoutLogsRepo } from './workout-logs.repo.js';
import { FUTURE_SKEW_MS, type CreatedWorkoutLog, type CreateLogBody } from './workout-logs.schemas.js';
import { recordEvents } from '../events/outbox.js';
import { logEvents } from './events.js';

export interface WorkoutLogsDeps {
  db: Db;
  logs: WorkoutLogsRepo;
  logging: LoggingRepo;
  /** The wall clock; tests move it. */
  now?: () => Date;
}

/** Optimistic writes tried before falling back to the member's history lock. */
const OPTIMISTIC_ATTEMPTS = 3;

const forbidden = (what: string) => new AppError('forbidden', `You hold no live subscription to the community of this ${what}; subscribe to log it there.`);

const holdersOf = (exerciseId: string, bests: Bests): HolderRow[] =>
  Object.entries(bests).flatMap(([kind, h]) => (h ? [{ ...h, exerciseId, kind: kind as PrKind }] : []));

/** PRs in answer order, whichever path found them: by the set that made them, then kind in PR_KINDS order. */
const byPosition = <T extends { position: number; kind: PrKind }>(prs: T[]) =>
  [...prs].sort((a, b) => a.position - b.position || PR_KINDS.indexOf(a.kind) - PR_KINDS.indexOf(b.kind));

/** The answer to a new log. */
export type CreatedLog = Static<typeof CreatedWorkoutLog>;

/** Logging what a member really did, with PR detection (DESIGN §7) kept per member × exercise × kind. */
export function createWorkoutLogsService({ db, logs, logging, now = () => new Date() }: WorkoutLogsDeps) {
  const activity = createActivityRepo();
  /** Problems a log has without looking anything up; reported with the lookups' ones. */
  function ownProblems(input: CreateLogBody, performedAt: Date): ErrorDetail[] {
    const problems: ErrorDetail[] = [];
    if (performedAt.getTime() > now().getTime() + FUTURE_SKEW_MS) problems.push({ field: 'performed_at', message: 'is in the future' });
    input.sets.forEach((s, i) => {
      if (s.load_kg !== undefined && !hasAtMostTwoDecimals(s.load_kg)) problems.push({ field: `sets.${i}.load_kg`, message: 'must have at most 2 decimals' });
    });
    return problems;
  }

  /**
   * Where the log happened, from what the logging statement looked up: the workout's
   * program, or the community named; neither = a personal log. Throws what a client fixes
   * first: 400 (all problems at once), then 404, then 403.
   */
  function placeOf(input: CreateLogBody, found: LogStatementResult, problems: ErrorDetail[]) {
    input.sets.forEach((s, i) => {
      if (!found.visible.has(s.exercise_id)) problems.push({ field: `sets.${i}.exercise_id`, message: 'is not an exercise you can log' });
    });
    if (problems.length) throw new AppError('validation_error', 'The workout log is not valid.', problems);
    if (input.workout_id) {
      const workout = found.workout;
      if (!workout) throw notFound('Workout');
      if (input.community_id && input.community_id !== workout.communityId) {
        throw new AppError('validation_error', 'The workout belongs to another community.', [{ field: 'community_id', message: "is not the workout's community" }]);
      }
      if (!workout.live) throw forbidden('workout');
      return { creatorId: workout.creatorId, communityId: workout.communityId };
    }
    if (input.community_id) {
      if (!found.community) throw notFound('Community');
      if (!found.community.live) throw forbidden('community');
      return { creatorId: found.community.creatorId, communityId: input.community_id };
    }
    return { creatorId: null, communityId: null };
  }

  /** Rebuilds the holders of these exercises from the member's whole history; returns the PRs each log made. */
  async function recomputeExercises(memberId: string, exerciseIds: string[], trx: Executor) {
    const history = await logs.history(memberId, exerciseIds, trx);
    const rows: HolderRow[] = [];
    const prsByLog = new Map<string, Array<PrFound & { exerciseId: string }>>();
    for (const [exerciseId, logsOfExercise] of history) {
      const result = recompute(logsOfExercise);
      rows.push(...holdersOf(exerciseId, result.bests));
      for (const [logId, prs] of result.prsByLog) prsByLog.set(logId, [...(prsByLog.get(logId) ?? []), ...prs.map((p) => ({ ...p, exerciseId }))]);
    }
    await logs.replaceHolders(memberId, exerciseIds, rows, trx);
    return prsByLog;
  }

  async function present(rows: WorkoutLogRow[]) {
    const sets = await logs.setsOf(rows.map((r) => r.id));
    return rows.map((r) => ({
      id: r.id,
      workout_id: r.workout_id,
      community_id: r.community_id,
      performed_at: iso(r.performed_at),
      sets: sets
        .filter((s) => s.log_id === r.id)
        .map((s) => ({ exercise_id: s.exercise_id, exercise_name: s.exercise_name, reps: s.reps, load_kg: Number(s.load_kg), is_warmup: s.is_warmup, rpe: s.rpe === null ? null : Number(s.rpe) })),
      created_at: iso(r.created_at),
    }));
  }

  return {
    /**
     * With `answer` (the request's Idempotency-Key) the answer is stored in the transaction
     * that writes the log: the batch's, or the locked path's.
     */
    async create(memberId: string, input: CreateLogBody, answer?: KeyedAnswer<CreatedLog>) {
      const performedAt = new Date(input.performed_at);
      const problems = ownProblems(input, performedAt);
      const id = newId();
      const sets: NewSet[] = input.sets.map((s, position) => ({
        position,
        exerciseId: s.exercise_id,
        reps: s.reps,
        loadKg: s.load_kg ?? 0,
        isWarmup: s.is_warmup ?? false,
        rpe: s.rpe ?? null,
      }));
      const asSent: NewLog = {
        id,
        member_id: memberId,
        creator_id: null,
        community_id: input.community_id ?? null,
        workout_id: input.workout_id ?? null,
        performed_at: performedAt,
        created_at: now(),
        sets,
      };
      /** The answer to log `id` made at `createdAt`, written where placeOf says, with the PRs it made. */
      const answerOf = (found: LogStatementResult, prs: Array<PrFound & { exerciseId: string }>, logged = { id, createdAt: asSent.created_at }): CreatedLog => {
        const place = placeOf(input, found, [...problems]);
        return {
          id: logged.id,
          workout_id: asSent.workout_id,
          community_id: place.communityId,
          performed_at: iso(performedAt),
          sets: sets.map((s) => ({ exercise_id: s.exerciseId, exercise_name: found.visible.get(s.exerciseId) ?? '', reps: s.reps, load_kg: s.loadKg, is_warmup: s.isWarmup, rpe: s.rpe })),
          created_at: iso(logged.createdAt),
          prs: byPosition(prs).map((p) => ({ exercise_id: p.exerciseId, kind: p.kind, value: displayValue(p.value), previous_value: displayValue(p.previousValue), set_index: p.position })),
        };
      };
      /**
       * A retry's answer from what its key holds: a log the statement stored its data for is
       * answered again from that data and this request's body (the same: its hash matched).
       */
      const replay = (row: KeyRow | undefined) => {
        if (!answer) throw new KeyTaken(row);
        return answer.replay(row, (data) => {
          const logged = storedLog(data, asSent);
          return answerOf(logged.result, logged.result.prs, logged);
        });
      };
      const item: LogItem = { log: asSent, valid: problems.length === 0, ...(answer ? { keyed: answer as KeyedAnswer<unknown> } : {}) };

      // One statement checks, detects PRs and writes (log-batch.ts), with the answer's data
      // under the request's key. It writes nothing when the key holds an answer (replayed),
      // the log is refused (placeOf says why), back-dated, or raced by another change of
      // this member's history (then it runs again).
      let result: LogStatementResult;
      try {
        result = await logging.logNewest(item);
        for (let attempt = 1; result.outcome === 'conflict' && attempt < OPTIMISTIC_ATTEMPTS; attempt++) result = await logging.logNewest({ ...item, valid: true });
      } catch (err) {
        if (err instanceof KeyTaken) return replay(err.row);
        throw err;
      }
      if (result.outcome === 'replay') return replay(result.stored);
      const place = placeOf(input, result, problems);
      if (result.outcome === 'written') return answerOf(result, result.prs);
      if (result.outcome === 'refused') throw new Error('the logging statement refused a log that passes every check');
      // A log dated before sets already logged changes what came after it (and a member
      // racing themselves past the retries lands here too): replay those exercises'
      // history under the member's history lock.
      const log: NewLog = { ...asSent, creator_id: place.creatorId, community_id: place.communityId };
      const exerciseIds = [...new Set(sets.map((s) => s.exerciseId))];
      return inTransaction(db, answer, async (trx) => {
        await logging.lockHistory(memberId, trx);
        await logs.insertLog(log, trx);
        if (log.creator_id) await activity.record(log.creator_id, memberId, log.created_at, trx);
        await rescoreMember(trx, memberId);
        const created = answerOf(result, (await recomputeExercises(memberId, exerciseIds, trx)).get(id) ?? []);
        if (log.creator_id) await recordEvents(trx, log.creator_id, logEvents(memberId, created));
        return created;
      }).catch((err: unknown) => {
        if (err instanceof KeyTaken) return replay(err.row);
        throw err;
      });
    },

    async list(memberId: string, query: PageQuery) {
      const [rows, total] = await Promise.all([logs.listOwn(memberId, { offset: offsetOf(query), limit: query.limit }), logs.countOwn(memberId)]);
      return paginated(await present(rows), total, query);
    },

    /** Deletes the log and rebuilds the member's records for the exercises it held, and their challenge scores. */
    async remove(memberId: string, id: string) {
      await db.transaction().execute(async (trx) => {
        await logging.lockHistory(memberId, trx);
        if (!(await logs.findOwn(memberId, id, trx))) throw notFound('Workout log');
        const exerciseIds = await logs.exercisesOf(id, trx);
        await logs.deleteLog(memberId, id, trx);
        if (exerciseIds.length) await recomputeExercises(memberId, exerciseIds, trx);
        await rescoreMember(trx, memberId);
      });
      return { id, deleted: true as const };
    },
  };
}

export type WorkoutLogsService = ReturnType<typeof createWorkoutLogsService>;
