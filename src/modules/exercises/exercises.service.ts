import type { Db } from '../../db/client.js';
import { uniqueViolation } from '../../db/errors.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, type StoredAnswer } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import type { ExerciseRow, ExercisesRepo, Viewer } from './exercises.repo.js';
import type { Equipment, MuscleGroup } from './catalog.data.js';
import type { CreateExerciseBody, ListExercisesQuery } from './exercises.schemas.js';

export const presentExercise = (videoBaseUrl: string) => (e: ExerciseRow) => ({
  id: e.id,
  name: e.name,
  name_pt: e.name_pt,
  slug: e.slug,
  muscle_group: e.muscle_group as MuscleGroup,
  secondary_muscles: e.secondary_muscles as MuscleGroup[],
  equipment: e.equipment as Equipment[],
  kind: e.kind,
  // Derived, not stored: the operator can move the whole catalog to another video host.
  video_url: e.slug !== null ? `${videoBaseUrl}/${e.slug}` : e.video_url,
  custom: e.creator_id !== null,
  created_at: iso(e.created_at),
});

export type Exercise = ReturnType<ReturnType<typeof presentExercise>>;

export function createExercisesService({ db, exercises, videoBaseUrl }: { db: Db; exercises: ExercisesRepo; videoBaseUrl: string }) {
  const present = presentExercise(videoBaseUrl);

  async function list(viewer: Viewer, query: ListExercisesQuery) {
    const filter = { muscleGroup: query.muscle_group, equipment: query.equipment, kind: query.kind, q: query.q?.trim() || undefined };
    const [rows, total] = await Promise.all([
      exercises.list(viewer, { ...filter, offset: offsetOf(query), limit: query.limit }),
      exercises.count(viewer, filter),
    ]);
    return paginated(rows.map(present), total, query);
  }

  return {
    listForCreator: (creatorId: string, query: ListExercisesQuery) => list({ creatorId }, query),
    listForMember: (memberId: string, query: ListExercisesQuery) => list({ memberId }, query),

    async get(creatorId: string, id: string) {
      const row = await exercises.find({ creatorId }, id);
      if (!row) throw notFound('Exercise');
      return present(row);
    },

    async create(creatorId: string, input: CreateExerciseBody, answer?: StoredAnswer<Exercise>) {
      const id = newId();
      const secondary = (input.secondary_muscles ?? []).filter((m) => m !== input.muscle_group);
      if (input.equipment.includes('bodyweight') && input.equipment.length > 1) {
        throw new AppError('validation_error', '`bodyweight` means no equipment at all; do not combine it with other items.', [
          { field: 'equipment', message: 'combines bodyweight with other equipment' },
        ]);
      }
      try {
        return await inTransaction(db, answer, async (trx) => {
          await exercises.insert(
            creatorId,
            { id, name: input.name.trim(), muscle_group: input.muscle_group, secondary_muscles: secondary, equipment: input.equipment, kind: input.kind, video_url: input.video_url ?? null },
            trx,
          );
          const row = await exercises.find({ creatorId }, id, trx);
          if (!row) throw notFound('Exercise');
          return present(row);
        });
      } catch (err) {
        if (uniqueViolation(err) === 'exercises_creator_name_key') throw new AppError('conflict', 'You already have an exercise with this name.');
        throw err;
      }
    },
  };
}

export type ExercisesService = ReturnType<typeof createExercisesService>;
