import { sql, type ExpressionBuilder } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { Database } from '../../db/types.js';
import { LIVE_STATUSES } from '../programs/access.js';
import { containsPattern } from '../../db/like.js';

export interface ExerciseFilter {
  muscleGroup?: string;
  equipment?: string;
  kind?: string;
  q?: string;
}

type Eb = ExpressionBuilder<Database, 'exercises'>;

/** The global catalog (creator_id null) plus one creator's own exercises. */
const visibleToCreator = (creatorId: string) => (eb: Eb) => eb.or([eb('exercises.creator_id', 'is', null), eb('exercises.creator_id', '=', creatorId)]);

/** The global catalog plus the exercises of every creator the member holds a live subscription with. */
const visibleToMember = (memberId: string) => (eb: Eb) =>
  eb.or([
    eb('exercises.creator_id', 'is', null),
    eb(
      'exercises.creator_id',
      'in',
      eb.selectFrom('subscriptions').select('subscriptions.creator_id').where('subscriptions.member_id', '=', memberId).where('subscriptions.status', 'in', LIVE_STATUSES),
    ),
  ]);

export type Viewer = { creatorId: string } | { memberId: string };
const visibleTo = (viewer: Viewer) => ('creatorId' in viewer ? visibleToCreator(viewer.creatorId) : visibleToMember(viewer.memberId));

// LIKE metacharacters in a search are literal text.

/** Exercises: the shared catalog is readable by all; a creator's own rows only by that creator (and their members). */
export function createExercisesRepo(db: Executor) {
  const filtered = (trx: Executor, viewer: Viewer, f: ExerciseFilter) => {
    let q = trx.selectFrom('exercises').where(visibleTo(viewer));
    if (f.muscleGroup) q = q.where('muscle_group', '=', f.muscleGroup);
    if (f.kind) q = q.where('kind', '=', f.kind as 'weighted');
    if (f.equipment) q = q.where(sql<boolean>`${f.equipment} = any(equipment)`);
    if (f.q) {
      const pattern = containsPattern(f.q);
      q = q.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('name_pt', 'ilike', pattern)]));
    }
    return q;
  };

  return {
    /** By name, ties by id. */
    async list(viewer: Viewer, f: ExerciseFilter & { offset: number; limit: number }, trx: Executor = db) {
      return filtered(trx, viewer, f).selectAll().orderBy('name').orderBy('id').offset(f.offset).limit(f.limit).execute();
    },

    async count(viewer: Viewer, f: ExerciseFilter, trx: Executor = db) {
      return (await filtered(trx, viewer, f).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
    },

    async find(viewer: Viewer, id: string, trx: Executor = db) {
      return trx.selectFrom('exercises').selectAll().where(visibleTo(viewer)).where('id', '=', id).executeTakeFirst();
    },

    /** Which of these ids the viewer may use, with their names (one query however many there are). */
    async visibleIds(viewer: Viewer, ids: readonly string[], trx: Executor = db): Promise<Map<string, string>> {
      if (ids.length === 0) return new Map();
      const rows = await trx.selectFrom('exercises').select(['id', 'name']).where(visibleTo(viewer)).where('id', 'in', [...new Set(ids)]).execute();
      return new Map(rows.map((r) => [r.id, r.name]));
    },

    async insert(
      creatorId: string,
      row: { id: string; name: string; muscle_group: string; secondary_muscles: string[]; equipment: string[]; kind: 'weighted' | 'bodyweight' | 'timed'; video_url: string | null },
      trx: Executor = db,
    ) {
      await trx
        .insertInto('exercises')
        .values({
          ...row,
          creator_id: creatorId,
          slug: null,
          name_pt: null,
          secondary_muscles: sql<string[]>`${sql.val(row.secondary_muscles)}::text[]`,
          equipment: sql<string[]>`${sql.val(row.equipment)}::text[]`,
        } as never)
        .execute();
    },
  };
}

export type ExercisesRepo = ReturnType<typeof createExercisesRepo>;
export type ExerciseRow = NonNullable<Awaited<ReturnType<ExercisesRepo['find']>>>;
