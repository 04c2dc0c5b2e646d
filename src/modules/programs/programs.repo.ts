import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { ProgramGoal, ProgramLevel } from '../../db/types.js';
import { LIVE_STATUSES } from './access.js';

export interface ProgramChanges {
  name?: string;
  description?: string;
  duration_weeks?: number;
  frequency_per_week?: number;
  level?: ProgramLevel;
  goal?: ProgramGoal;
}

export interface EntryRow {
  exercise_id: string;
  sets: number;
  reps: string;
  load_kg: number | null;
  rest_sec: number | null;
}

/** Programs, workouts and their exercise entries. Deleted rows (soft) are invisible here. */
export function createProgramsRepo(db: Executor) {
  const programs = (trx: Executor) =>
    trx
      .selectFrom('workout_programs as p')
      .selectAll('p')
      .select((eb) =>
        eb
          .selectFrom('workouts as w')
          .select(sql<number>`count(*)::int`.as('n'))
          .whereRef('w.creator_id', '=', 'p.creator_id')
          .whereRef('w.program_id', '=', 'p.id')
          .where('w.deleted_at', 'is', null)
          .as('workouts_count'),
      )
      .where('p.deleted_at', 'is', null);

  const liveCommunities = (trx: Executor, memberId: string) =>
    trx.selectFrom('subscriptions').select('community_id').where('member_id', '=', memberId).where('status', 'in', LIVE_STATUSES);

  return {
    async find(creatorId: string, id: string, trx: Executor = db) {
      return programs(trx).where('p.creator_id', '=', creatorId).where('p.id', '=', id).executeTakeFirst();
    },

    /** Locks the program row: workouts are added and reordered one request at a time. */
    async lock(creatorId: string, id: string, trx: Executor) {
      return trx
        .selectFrom('workout_programs')
        .select('id')
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .forUpdate()
        .executeTakeFirst();
    },

    /** Newest first, ties by id. */
    async list(creatorId: string, f: { communityId?: string; offset: number; limit: number }, trx: Executor = db) {
      let q = programs(trx).where('p.creator_id', '=', creatorId);
      if (f.communityId) q = q.where('p.community_id', '=', f.communityId);
      return q.orderBy('p.created_at', 'desc').orderBy('p.id', 'desc').offset(f.offset).limit(f.limit).execute();
    },

    async count(creatorId: string, f: { communityId?: string }, trx: Executor = db) {
      let q = trx.selectFrom('workout_programs').select(sql<number>`count(*)::int`.as('n')).where('creator_id', '=', creatorId).where('deleted_at', 'is', null);
      if (f.communityId) q = q.where('community_id', '=', f.communityId);
      return (await q.executeTakeFirstOrThrow()).n;
    },

    async insert(
      creatorId: string,
      row: { id: string; community_id: string; name: string; description: string; duration_weeks: number; frequency_per_week: number; level: ProgramLevel; goal: ProgramGoal },
      trx: Executor = db,
    ) {
      await trx.insertInto('workout_programs').values({ ...row, creator_id: creatorId }).execute();
    },

    async update(creatorId: string, id: string, changes: ProgramChanges, trx: Executor = db) {
      await trx.updateTable('workout_programs').set({ ...changes, updated_at: new Date() }).where('creator_id', '=', creatorId).where('id', '=', id).execute();
    },

    async softDelete(creatorId: string, id: string, trx: Executor = db) {
      const now = new Date();
      await trx.updateTable('workout_programs').set({ deleted_at: now }).where('creator_id', '=', creatorId).where('id', '=', id).where('deleted_at', 'is', null).execute();
      await trx.updateTable('workouts').set({ deleted_at: now }).where('creator_id', '=', creatorId).where('program_id', '=', id).where('deleted_at', 'is', null).execute();
    },

    /** Programs of the communities where the member holds a live subscription, newest first. */
    async listForMember(memberId: string, f: { offset: number; limit: number }, trx: Executor = db) {
      return programs(trx)
        .where('p.community_id', 'in', liveCommunities(trx, memberId))
        .orderBy('p.created_at', 'desc')
        .orderBy('p.id', 'desc')
        .offset(f.offset)
        .limit(f.limit)
        .execute();
    },

    async countForMember(memberId: string, trx: Executor = db) {
      const row = await trx
        .selectFrom('workout_programs')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('deleted_at', 'is', null)
        .where('community_id', 'in', liveCommunities(trx, memberId))
        .executeTakeFirstOrThrow();
      return row.n;
    },

    /** A program by id alone, for the member API, which then checks the member's access. */
    async findAnyCreator(id: string, trx: Executor = db) {
      return programs(trx).where('p.id', '=', id).executeTakeFirst();
    },

    /** Workouts of a program in order, with their entries and exercise names. */
    async workoutsOf(creatorId: string, programId: string, trx: Executor = db) {
      const workouts = await trx
        .selectFrom('workouts')
        .selectAll()
        .where('creator_id', '=', creatorId)
        .where('program_id', '=', programId)
        .where('deleted_at', 'is', null)
        .orderBy('position')
        .execute();
      const entries = workouts.length
        ? await trx
            .selectFrom('workout_exercises as we')
            .innerJoin('exercises as e', 'e.id', 'we.exercise_id')
            .select(['we.workout_id', 'we.position', 'we.exercise_id', 'e.name as exercise_name', 'e.muscle_group', 'we.sets', 'we.reps', 'we.load_kg', 'we.rest_sec'])
            .where('we.creator_id', '=', creatorId)
            .where(
              'we.workout_id',
              'in',
              workouts.map((w) => w.id),
            )
            .orderBy('we.workout_id')
            .orderBy('we.position')
            .execute()
        : [];
      return workouts.map((w) => ({ ...w, entries: entries.filter((e) => e.workout_id === w.id) }));
    },

    async findWorkout(creatorId: string, id: string, trx: Executor = db, opts: { lock?: boolean } = {}) {
      let q = trx.selectFrom('workouts').selectAll().where('creator_id', '=', creatorId).where('id', '=', id).where('deleted_at', 'is', null);
      if (opts.lock) q = q.forUpdate();
      return q.executeTakeFirst();
    },

    async nextPosition(creatorId: string, programId: string, trx: Executor) {
      const row = await trx
        .selectFrom('workouts')
        .select(sql<number>`coalesce(max(position) + 1, 0)::int`.as('n'))
        .where('creator_id', '=', creatorId)
        .where('program_id', '=', programId)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow();
      return row.n;
    },

    async insertWorkout(creatorId: string, row: { id: string; program_id: string; name: string; position: number }, trx: Executor) {
      await trx.insertInto('workouts').values({ ...row, creator_id: creatorId }).execute();
    },

    async renameWorkout(creatorId: string, id: string, name: string | undefined, trx: Executor) {
      await trx
        .updateTable('workouts')
        .set({ ...(name !== undefined ? { name } : {}), updated_at: new Date() })
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .execute();
    },

    async replaceEntries(creatorId: string, workoutId: string, entries: EntryRow[], trx: Executor) {
      await trx.deleteFrom('workout_exercises').where('creator_id', '=', creatorId).where('workout_id', '=', workoutId).execute();
      await trx
        .insertInto('workout_exercises')
        .values(entries.map((e, position) => ({ ...e, creator_id: creatorId, workout_id: workoutId, position })))
        .execute();
    },

    /** Deletes softly (logs keep their reference) and closes the gap in the order. */
    async softDeleteWorkout(creatorId: string, workout: { id: string; program_id: string; position: number }, trx: Executor) {
      await trx.updateTable('workouts').set({ deleted_at: new Date() }).where('creator_id', '=', creatorId).where('id', '=', workout.id).execute();
      await trx
        .updateTable('workouts')
        .set((eb) => ({ position: eb('position', '-', 1) }))
        .where('creator_id', '=', creatorId)
        .where('program_id', '=', workout.program_id)
        .where('deleted_at', 'is', null)
        .where('position', '>', workout.position)
        .execute();
    },

    async setPositions(creatorId: string, programId: string, orderedIds: string[], trx: Executor) {
      if (orderedIds.length === 0) return;
      const values = sql.join(orderedIds.map((id, i) => sql`(${id}::uuid, ${i}::int)`));
      await sql`update workouts w set position = v.position, updated_at = now()
        from (values ${values}) as v(id, position)
        where w.creator_id = ${creatorId} and w.program_id = ${programId} and w.id = v.id`.execute(trx);
    },
  };
}

export type ProgramsRepo = ReturnType<typeof createProgramsRepo>;
export type ProgramRow = NonNullable<Awaited<ReturnType<ProgramsRepo['find']>>>;
export type WorkoutWithEntries = Awaited<ReturnType<ProgramsRepo['workoutsOf']>>[number];
