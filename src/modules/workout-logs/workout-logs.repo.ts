import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { PrKind } from '../../db/types.js';
import type { Holder, LogRef, WorkingSet } from './prs.js';

export interface NewSet extends WorkingSet {
  exerciseId: string;
  rpe: number | null;
}

export interface NewLog {
  id: string;
  member_id: string;
  creator_id: string | null;
  community_id: string | null;
  workout_id: string | null;
  performed_at: Date;
  created_at: Date;
  sets: NewSet[];
}

export interface HolderRow extends Holder {
  exerciseId: string;
  kind: PrKind;
}

/** Workout logs, their sets and the personal-record state. Member-owned: member_id leads every member query. */
export function createWorkoutLogsRepo(db: Executor) {
  return {
    async insertLog(row: NewLog, trx: Executor) {
      const { sets, ...log } = row;
      await trx.insertInto('workout_logs').values({ ...log, sets_count: sets.length }).execute();
      await trx
        .insertInto('workout_sets')
        .values(
          sets.map((s) => ({
            log_id: row.id,
            position: s.position,
            member_id: row.member_id,
            exercise_id: s.exerciseId,
            performed_at: row.performed_at,
            reps: s.reps,
            load_kg: s.loadKg,
            is_warmup: s.isWarmup,
            rpe: s.rpe,
          })),
        )
        .execute();
    },

    async replaceHolders(memberId: string, exerciseIds: string[], rows: HolderRow[], trx: Executor) {
      await trx.deleteFrom('personal_records').where('member_id', '=', memberId).where('exercise_id', 'in', exerciseIds).execute();
      if (rows.length) await trx.insertInto('personal_records').values(rows.map((h) => holderValues(memberId, h))).execute();
    },

    /** Working sets of these exercises in time order, grouped by exercise then log (index workout_sets_history_idx). */
    async history(memberId: string, exerciseIds: string[], trx: Executor) {
      const rows = await trx
        .selectFrom('workout_sets as s')
        .innerJoin('workout_logs as l', 'l.id', 's.log_id')
        .select(['s.exercise_id', 's.log_id', 's.position', 's.performed_at', 's.reps', 's.load_kg', 'l.creator_id'])
        .where('s.member_id', '=', memberId)
        .where('s.exercise_id', 'in', exerciseIds)
        .where('s.is_warmup', '=', false)
        .orderBy('s.exercise_id')
        .orderBy('s.performed_at')
        .orderBy('s.log_id')
        .orderBy('s.position')
        .execute();
      const byExercise = new Map<string, Array<{ log: LogRef; sets: WorkingSet[] }>>();
      for (const r of rows) {
        const logs = byExercise.get(r.exercise_id) ?? byExercise.set(r.exercise_id, []).get(r.exercise_id)!;
        let last = logs[logs.length - 1];
        if (last?.log.logId !== r.log_id) {
          last = { log: { logId: r.log_id, performedAt: new Date(r.performed_at), creatorId: r.creator_id }, sets: [] };
          logs.push(last);
        }
        last.sets.push({ position: r.position, reps: r.reps, loadKg: Number(r.load_kg), isWarmup: false });
      }
      return byExercise;
    },

    async findOwn(memberId: string, id: string, trx: Executor = db) {
      return trx.selectFrom('workout_logs').selectAll().where('member_id', '=', memberId).where('id', '=', id).executeTakeFirst();
    },

    async exercisesOf(logId: string, trx: Executor) {
      const rows = await trx.selectFrom('workout_sets').select('exercise_id').distinct().where('log_id', '=', logId).execute();
      return rows.map((r) => r.exercise_id);
    },

    async deleteLog(memberId: string, id: string, trx: Executor) {
      // No cascading key (migrations/0010): the sets go first, in the log's transaction.
      await trx.deleteFrom('workout_sets').where('member_id', '=', memberId).where('log_id', '=', id).execute();
      await trx.deleteFrom('workout_logs').where('member_id', '=', memberId).where('id', '=', id).execute();
    },

    /** The member's logs, newest first (ties by id). */
    async listOwn(memberId: string, page: { offset: number; limit: number }, trx: Executor = db) {
      return trx
        .selectFrom('workout_logs')
        .selectAll()
        .where('member_id', '=', memberId)
        .orderBy('performed_at', 'desc')
        .orderBy('id', 'desc')
        .offset(page.offset)
        .limit(page.limit)
        .execute();
    },

    async countOwn(memberId: string, trx: Executor = db) {
      return (await trx.selectFrom('workout_logs').select(sql<number>`count(*)::int`.as('n')).where('member_id', '=', memberId).executeTakeFirstOrThrow()).n;
    },

    /** Sets of these logs with exercise names, in order. */
    async setsOf(logIds: string[], trx: Executor = db) {
      if (logIds.length === 0) return [];
      return trx
        .selectFrom('workout_sets as s')
        .innerJoin('exercises as e', 'e.id', 's.exercise_id')
        .select(['s.log_id', 's.position', 's.exercise_id', 'e.name as exercise_name', 's.reps', 's.load_kg', 's.is_warmup', 's.rpe'])
        .where('s.log_id', 'in', logIds)
        .orderBy('s.log_id')
        .orderBy('s.position')
        .execute();
    },
  };
}

const holderValues = (memberId: string, h: HolderRow) => ({
  member_id: memberId,
  exercise_id: h.exerciseId,
  kind: h.kind,
  value: h.value,
  previous_value: h.previousValue,
  log_id: h.logId,
  set_position: h.position,
  creator_id: h.creatorId,
  performed_at: h.performedAt,
});

export type WorkoutLogsRepo = ReturnType<typeof createWorkoutLogsRepo>;
export type WorkoutLogRow = NonNullable<Awaited<ReturnType<WorkoutLogsRepo['findOwn']>>>;
