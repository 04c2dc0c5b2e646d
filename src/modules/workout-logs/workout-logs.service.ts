import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { iso, type Executor } from '../../db/tx.js';
import { AppError, notFound, type ErrorDetail } from '../../http/errors.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { ExercisesRepo } from '../exercises/exercises.repo.js';
import { hasAtMostTwoDecimals } from '../programs/programs.service.js';
import { applyLog, displayValue, recompute, type Bests, type LogRef, type PrFound, type PrKind } from './prs.js';
import type { HolderRow, NewLog, NewSet, WorkoutLogRow, WorkoutLogsRepo } from './workout-logs.repo.js';
import { FUTURE_SKEW_MS, type CreateLogBody } from './workout-logs.schemas.js';

export interface WorkoutLogsDeps {
  db: Db;
  logs: WorkoutLogsRepo;
  exercises: ExercisesRepo;
  /** The wall clock; tests move it. */
  now?: () => Date;
}

const forbidden = (what: string) => new AppError('forbidden', `You hold no live subscription to the community of this ${what}; subscribe to log it there.`);

const bestsFrom = (rows: HolderRow[]) => {
  const byExercise = new Map<string, Bests>();
  for (const h of rows) byExercise.set(h.exerciseId, { ...byExercise.get(h.exerciseId), [h.kind]: h });
  return byExercise;
};

const holdersOf = (exerciseId: string, bests: Bests, only?: Set<PrKind>): HolderRow[] =>
  Object.entries(bests).flatMap(([kind, h]) => (h && (!only || only.has(kind as PrKind)) ? [{ ...h, exerciseId, kind: kind as PrKind }] : []));

/** Logging what a member really did, with PR detection (DESIGN §7) kept per member × exercise × kind. */
export function createWorkoutLogsService({ db, logs, exercises, now = () => new Date() }: WorkoutLogsDeps) {
  /** Where the log happened: from the workout's program, or the community named; neither = personal. One query either way. */
  async function contextOf(memberId: string, input: CreateLogBody) {
    const live = (communityRef: 'p.community_id' | 'c.id') =>
      sql<boolean>`exists (select 1 from subscriptions s where s.member_id = ${memberId} and s.community_id = ${sql.ref(communityRef)} and s.status in ('trialing', 'active', 'past_due'))`;
    if (input.workout_id) {
      const workout = await db
        .selectFrom('workouts as w')
        .innerJoin('workout_programs as p', 'p.id', 'w.program_id')
        .select(['p.creator_id', 'p.community_id', live('p.community_id').as('live')])
        .where('w.id', '=', input.workout_id)
        .where('w.deleted_at', 'is', null)
        .where('p.deleted_at', 'is', null)
        .executeTakeFirst();
      if (!workout) throw notFound('Workout');
      if (input.community_id && input.community_id !== workout.community_id) {
        throw new AppError('validation_error', 'The workout belongs to another community.', [{ field: 'community_id', message: "is not the workout's community" }]);
      }
      if (!workout.live) throw forbidden('workout');
      return { creatorId: workout.creator_id, communityId: workout.community_id, workoutId: input.workout_id };
    }
    if (input.community_id) {
      const community = await db.selectFrom('communities as c').select(['c.creator_id', live('c.id').as('live')]).where('c.id', '=', input.community_id).executeTakeFirst();
      if (!community) throw notFound('Community');
      if (!community.live) throw forbidden('community');
      return { creatorId: community.creator_id, communityId: input.community_id, workoutId: null };
    }
    return { creatorId: null, communityId: null, workoutId: null };
  }

  /** The performed_at and the names of the exercises, once the log is known to be valid. */
  async function validate(memberId: string, input: CreateLogBody): Promise<{ performedAt: Date; names: Map<string, string> }> {
    const performedAt = new Date(input.performed_at);
    const problems: ErrorDetail[] = [];
    if (performedAt.getTime() > now().getTime() + FUTURE_SKEW_MS) problems.push({ field: 'performed_at', message: 'is in the future' });
    input.sets.forEach((s, i) => {
      if (s.load_kg !== undefined && !hasAtMostTwoDecimals(s.load_kg)) problems.push({ field: `sets.${i}.load_kg`, message: 'must have at most 2 decimals' });
    });
    const visible = await exercises.visibleIds({ memberId }, input.sets.map((s) => s.exercise_id));
    input.sets.forEach((s, i) => {
      if (!visible.has(s.exercise_id)) problems.push({ field: `sets.${i}.exercise_id`, message: 'is not an exercise you can log' });
    });
    if (problems.length) throw new AppError('validation_error', 'The workout log is not valid.', problems);
    return { performedAt, names: visible };
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
    async create(memberId: string, input: CreateLogBody) {
      const { performedAt, names } = await validate(memberId, input);
      const context = await contextOf(memberId, input);
      const id = newId();
      const sets: NewSet[] = input.sets.map((s, position) => ({
        position,
        exerciseId: s.exercise_id,
        reps: s.reps,
        loadKg: s.load_kg ?? 0,
        isWarmup: s.is_warmup ?? false,
        rpe: s.rpe ?? null,
      }));
      const exerciseIds = [...new Set(sets.map((s) => s.exerciseId))];
      const log: NewLog = { id, member_id: memberId, creator_id: context.creatorId, community_id: context.communityId, workout_id: context.workoutId, performed_at: performedAt, created_at: new Date(), sets };
      const logRef: LogRef = { logId: id, performedAt, creatorId: context.creatorId };

      // Round trips: lock, read state, one write (log + sets + moved records), commit.
      const found = await db.transaction().execute(async (trx) => {
        await logs.lockMemberHistory(memberId, trx);
        const state = await logs.readState(memberId, exerciseIds, performedAt, trx);
        // A log dated before sets already logged changes what came after it: rebuild those
        // exercises from history. The usual case (the newest log) only compares with the holders.
        if (state.later) {
          await logs.insertLog(log, trx);
          return (await recomputeExercises(memberId, exerciseIds, trx)).get(id) ?? [];
        }
        const bests = bestsFrom(state.holders);
        const changed: HolderRow[] = [];
        const prs: Array<PrFound & { exerciseId: string }> = [];
        for (const exerciseId of exerciseIds) {
          const before = bests.get(exerciseId) ?? {};
          const applied = applyLog(before, sets.filter((s) => s.exerciseId === exerciseId), logRef);
          const moved = new Set((Object.keys(applied.bests) as PrKind[]).filter((k) => applied.bests[k] !== before[k]));
          changed.push(...holdersOf(exerciseId, applied.bests, moved));
          prs.push(...applied.prs.map((p) => ({ ...p, exerciseId })));
        }
        await logs.writeLog(log, changed, trx);
        return prs;
      });

      return {
        id,
        workout_id: context.workoutId,
        community_id: context.communityId,
        performed_at: iso(performedAt),
        sets: sets.map((s) => ({ exercise_id: s.exerciseId, exercise_name: names.get(s.exerciseId) ?? '', reps: s.reps, load_kg: s.loadKg, is_warmup: s.isWarmup, rpe: s.rpe })),
        created_at: iso(log.created_at),
        prs: found.map((p) => ({ exercise_id: p.exerciseId, kind: p.kind, value: displayValue(p.value), previous_value: displayValue(p.previousValue), set_index: p.position })),
      };
    },

    async list(memberId: string, query: PageQuery) {
      const [rows, total] = await Promise.all([logs.listOwn(memberId, { offset: offsetOf(query), limit: query.limit }), logs.countOwn(memberId)]);
      return paginated(await present(rows), total, query);
    },

    /** Deletes the log and rebuilds the member's records for the exercises it held. */
    async remove(memberId: string, id: string) {
      await db.transaction().execute(async (trx) => {
        await logs.lockMemberHistory(memberId, trx);
        if (!(await logs.findOwn(memberId, id, trx))) throw notFound('Workout log');
        const exerciseIds = await logs.exercisesOf(id, trx);
        await logs.deleteLog(memberId, id, trx);
        if (exerciseIds.length) await recomputeExercises(memberId, exerciseIds, trx);
      });
      return { id, deleted: true as const };
    },
  };
}

export type WorkoutLogsService = ReturnType<typeof createWorkoutLogsService>;
