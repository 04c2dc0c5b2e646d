import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';

/**
 * What a creator may see of a member's training: only logs done in the creator's
 * communities (workout_logs.creator_id) and records held by such logs. For the creator's
 * member record (GET /members/:id); personal logs and other creators' logs never show.
 */
export function createTrainingViewRepo(db: Executor) {
  return {
    /** The member's executed workouts in this creator's communities, newest first (index workout_logs_creator_member_idx). */
    async executedWorkouts(creatorId: string, memberId: string, page: { offset: number; limit: number }, trx: Executor = db) {
      return trx
        .selectFrom('workout_logs as l')
        .leftJoin('workouts as w', 'w.id', 'l.workout_id')
        .select(['l.id', 'l.community_id', 'l.workout_id', 'w.name as workout_name', 'l.performed_at', 'l.sets_count', 'l.created_at'])
        .where('l.creator_id', '=', creatorId)
        .where('l.member_id', '=', memberId)
        .orderBy('l.performed_at', 'desc')
        .orderBy('l.id', 'desc')
        .offset(page.offset)
        .limit(page.limit)
        .execute();
    },

    async countExecutedWorkouts(creatorId: string, memberId: string, trx: Executor = db) {
      const row = await trx
        .selectFrom('workout_logs')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('creator_id', '=', creatorId)
        .where('member_id', '=', memberId)
        .executeTakeFirstOrThrow();
      return row.n;
    },

    /** Records the member set in this creator's communities (baselines, which beat nothing, excluded). */
    async personalRecords(creatorId: string, memberId: string, trx: Executor = db) {
      return trx
        .selectFrom('personal_records as pr')
        .innerJoin('exercises as e', 'e.id', 'pr.exercise_id')
        .select(['pr.exercise_id', 'e.name as exercise_name', 'pr.kind', 'pr.value', 'pr.previous_value', 'pr.log_id', 'pr.performed_at'])
        .where('pr.creator_id', '=', creatorId)
        .where('pr.member_id', '=', memberId)
        .where('pr.previous_value', 'is not', null)
        .orderBy('pr.performed_at', 'desc')
        .orderBy('pr.exercise_id')
        .orderBy('pr.kind')
        .execute();
    },
  };
}

export type TrainingViewRepo = ReturnType<typeof createTrainingViewRepo>;
