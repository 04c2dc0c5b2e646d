import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, type Executor, type StoredAnswer } from '../../db/tx.js';
import { AppError, notFound, type ErrorDetail } from '../../http/errors.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import type { CommunitiesRepo } from '../communities/communities.repo.js';
import type { ExercisesRepo } from '../exercises/exercises.repo.js';
import { hasLiveSubscription } from './access.js';
import type { EntryRow, ProgramRow, ProgramsRepo, WorkoutWithEntries } from './programs.repo.js';
import type {
  CreateProgramBody,
  CreateWorkoutBody,
  ExerciseEntryInput,
  ListProgramsQuery,
  UpdateProgramBody,
  UpdateWorkoutBody,
  WorkoutOrderBody,
} from './programs.schemas.js';
import { WORKOUTS_MAX } from './programs.schemas.js';

export const presentProgram = (p: ProgramRow) => ({
  id: p.id,
  community_id: p.community_id,
  name: p.name,
  description: p.description,
  duration_weeks: p.duration_weeks,
  frequency_per_week: p.frequency_per_week,
  level: p.level,
  goal: p.goal,
  workouts_count: p.workouts_count ?? 0,
  created_at: iso(p.created_at),
  updated_at: iso(p.updated_at),
});

export const presentWorkout = (w: WorkoutWithEntries) => ({
  id: w.id,
  program_id: w.program_id,
  name: w.name,
  position: w.position,
  exercises: w.entries.map((e) => ({
    position: e.position,
    exercise_id: e.exercise_id,
    exercise_name: e.exercise_name,
    muscle_group: e.muscle_group,
    sets: e.sets,
    reps: e.reps,
    load_kg: e.load_kg === null ? null : Number(e.load_kg),
    rest_sec: e.rest_sec,
  })),
  created_at: iso(w.created_at),
  updated_at: iso(w.updated_at),
});

/** At most two decimals, checked on the integer hundredths (0.1 + 0.2 style noise tolerated). */
export const hasAtMostTwoDecimals = (x: number) => Math.abs(Math.round(x * 100) - x * 100) < 1e-6;

function entryProblems(entries: ExerciseEntryInput[], visible: ReadonlyMap<string, string>): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  entries.forEach((e, i) => {
    if (!visible.has(e.exercise_id)) problems.push({ field: `exercises.${i}.exercise_id`, message: 'is not a catalog exercise nor one of yours' });
    const range = /^(\d+)-(\d+)$/.exec(e.reps);
    if (range && Number(range[1]) >= Number(range[2])) problems.push({ field: `exercises.${i}.reps`, message: 'range must go from low to high' });
    if (e.load_kg != null && !hasAtMostTwoDecimals(e.load_kg)) problems.push({ field: `exercises.${i}.load_kg`, message: 'must have at most 2 decimals' });
  });
  return problems;
}

export type WorkoutDetail = ReturnType<typeof presentWorkout>;
export type ProgramDetail = ReturnType<typeof presentProgram> & { workouts: WorkoutDetail[] };

export interface ProgramsDeps {
  db: Db;
  programs: ProgramsRepo;
  communities: CommunitiesRepo;
  exercises: ExercisesRepo;
}

/** Program rules: a program lives in one of the creator's communities; workouts are ordered within it. */
export function createProgramsService({ db, programs, communities, exercises }: ProgramsDeps) {
  async function load(creatorId: string, id: string, trx: Executor = db) {
    const row = await programs.find(creatorId, id, trx);
    if (!row) throw notFound('Program');
    return row;
  }

  async function detail(creatorId: string, id: string, trx: Executor = db) {
    const program = await load(creatorId, id, trx);
    const workouts = await programs.workoutsOf(creatorId, id, trx);
    return { ...presentProgram(program), workouts: workouts.map(presentWorkout) };
  }

  async function workoutDetail(creatorId: string, programId: string, workoutId: string, trx: Executor = db) {
    const found = (await programs.workoutsOf(creatorId, programId, trx)).find((w) => w.id === workoutId);
    if (!found) throw notFound('Workout');
    return presentWorkout(found);
  }

  async function checkedEntries(creatorId: string, entries: ExerciseEntryInput[]): Promise<EntryRow[]> {
    const visible = await exercises.visibleIds({ creatorId }, entries.map((e) => e.exercise_id));
    const problems = entryProblems(entries, visible);
    if (problems.length) throw new AppError('validation_error', 'Some exercise entries are not valid.', problems);
    return entries.map((e) => ({ exercise_id: e.exercise_id, sets: e.sets, reps: e.reps, load_kg: e.load_kg ?? null, rest_sec: e.rest_sec ?? null }));
  }

  return {
    detail,

    async assertProgram(creatorId: string, id: string) {
      await load(creatorId, id);
    },

    async list(creatorId: string, query: ListProgramsQuery) {
      if (query.community_id && !(await communities.findStatus(creatorId, query.community_id))) throw notFound('Community');
      const filter = query.community_id ? { communityId: query.community_id } : {};
      const [rows, total] = await Promise.all([programs.list(creatorId, { ...filter, offset: offsetOf(query), limit: query.limit }), programs.count(creatorId, filter)]);
      return paginated(rows.map(presentProgram), total, query);
    },

    async create(creatorId: string, input: CreateProgramBody, answer?: StoredAnswer<ProgramDetail>) {
      if (!(await communities.findStatus(creatorId, input.community_id))) throw notFound('Community');
      const id = newId();
      return inTransaction(db, answer, async (trx) => {
        await programs.insert(
          creatorId,
          {
            id,
            community_id: input.community_id,
            name: input.name.trim(),
            description: input.description ?? '',
            duration_weeks: input.duration_weeks,
            frequency_per_week: input.frequency_per_week,
            level: input.level,
            goal: input.goal,
          },
          trx,
        );
        return detail(creatorId, id, trx);
      });
    },

    async update(creatorId: string, id: string, input: UpdateProgramBody) {
      await load(creatorId, id);
      const changes = { ...input, ...(input.name !== undefined ? { name: input.name.trim() } : {}) };
      await db.transaction().execute((trx) => programs.update(creatorId, id, changes, trx));
      return detail(creatorId, id);
    },

    async remove(creatorId: string, id: string) {
      await load(creatorId, id);
      await db.transaction().execute((trx) => programs.softDelete(creatorId, id, trx));
      return { id, deleted: true as const };
    },

    async addWorkout(creatorId: string, programId: string, input: CreateWorkoutBody, answer?: StoredAnswer<WorkoutDetail>) {
      await load(creatorId, programId);
      const entries = await checkedEntries(creatorId, input.exercises);
      const id = newId();
      return inTransaction(db, answer, async (trx) => {
        if (!(await programs.lock(creatorId, programId, trx))) throw notFound('Program');
        // Positions are dense (0..n-1; deleting closes the gap), so the next one is the count.
        const position = await programs.nextPosition(creatorId, programId, trx);
        if (position >= WORKOUTS_MAX) {
          throw new AppError('conflict', `This program already holds ${WORKOUTS_MAX} workouts, the most a program can hold. Delete one, or start another program, before adding more.`);
        }
        await programs.insertWorkout(creatorId, { id, program_id: programId, name: input.name.trim(), position }, trx);
        await programs.replaceEntries(creatorId, id, entries, trx);
        return workoutDetail(creatorId, programId, id, trx);
      });
    },

    async updateWorkout(creatorId: string, id: string, input: UpdateWorkoutBody) {
      const workout = await programs.findWorkout(creatorId, id);
      if (!workout) throw notFound('Workout');
      const entries = input.exercises ? await checkedEntries(creatorId, input.exercises) : undefined;
      await db.transaction().execute(async (trx) => {
        if (!(await programs.findWorkout(creatorId, id, trx, { lock: true }))) throw notFound('Workout');
        await programs.renameWorkout(creatorId, id, input.name?.trim(), trx);
        if (entries) await programs.replaceEntries(creatorId, id, entries, trx);
      });
      return workoutDetail(creatorId, workout.program_id, id);
    },

    async removeWorkout(creatorId: string, id: string) {
      await db.transaction().execute(async (trx) => {
        const workout = await programs.findWorkout(creatorId, id, trx);
        if (!workout || !(await programs.lock(creatorId, workout.program_id, trx))) throw notFound('Workout');
        // Re-read under the program lock: the position may have moved meanwhile.
        const current = await programs.findWorkout(creatorId, id, trx);
        if (!current) throw notFound('Workout');
        await programs.softDeleteWorkout(creatorId, current, trx);
      });
      return { id, deleted: true as const };
    },

    async reorder(creatorId: string, programId: string, input: WorkoutOrderBody) {
      await db.transaction().execute(async (trx) => {
        if (!(await programs.lock(creatorId, programId, trx))) throw notFound('Program');
        const current = (await programs.workoutsOf(creatorId, programId, trx)).map((w) => w.id);
        const wanted = input.workout_ids;
        const same = wanted.length === current.length && new Set(wanted).size === wanted.length && wanted.every((id) => current.includes(id));
        if (!same) {
          throw new AppError('validation_error', 'List every workout of the program exactly once.', [
            { field: 'workout_ids', message: `must be a permutation of the program's ${current.length} workout ids` },
          ]);
        }
        await programs.setPositions(creatorId, programId, wanted, trx);
      });
      return detail(creatorId, programId);
    },

    /** Programs the member can open: their communities with a live subscription. */
    async listForMember(memberId: string, query: { page: number; limit: number }) {
      const [rows, total] = await Promise.all([programs.listForMember(memberId, { offset: offsetOf(query), limit: query.limit }), programs.countForMember(memberId)]);
      return paginated(rows.map(presentProgram), total, query);
    },

    /** 404 for no such program; 403 when it exists but the member holds no live subscription to its community. */
    async getForMember(memberId: string, id: string) {
      const program = await programs.findAnyCreator(id);
      if (!program) throw notFound('Program');
      if (!(await hasLiveSubscription(db, memberId, program.community_id))) {
        throw new AppError('forbidden', "This program belongs to a community you don't have a live subscription to; subscribe to open it.");
      }
      return detail(program.creator_id, id);
    },
  };
}

export type ProgramsService = ReturnType<typeof createProgramsService>;
