import { Type, type Static } from '@sinclair/typebox';
import { DateTimeInput, Int64, Timestamp, Uuid } from '../../http/schemas.js';
import { EXERCISE_TEXT_MAX } from '../exercises/exercises.schemas.js';

export const MAX_SETS_PER_LOG = 200;
export const FUTURE_SKEW_MS = 5 * 60_000;

const SetInput = Type.Object(
  {
    exercise_id: Type.String({ format: 'uuid', maxLength: 36, description: 'A catalog exercise, or an own exercise of a creator you subscribe to.' }),
    reps: Type.Integer({ format: 'int32', minimum: 1, maximum: 1000, description: 'Repetitions done (seconds for a timed exercise).' }),
    load_kg: Type.Optional(Type.Number({ minimum: 0, maximum: 2000, description: 'Load in kilograms, at most 2 decimals; 0 (the default) for bodyweight.' })),
    is_warmup: Type.Optional(Type.Boolean({ description: 'Warm-up sets never make or hold a personal record. Default false.' })),
    rpe: Type.Optional(Type.Number({ minimum: 1, maximum: 10, multipleOf: 0.5, description: 'Rate of perceived exertion, 1 to 10 in halves.' })),
  },
  { additionalProperties: false },
);

export const CreateLogBody = Type.Object(
  {
    workout_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: "The program workout followed; you need a live subscription to its program's community (else 403)." })),
    community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'The community trained for, without a program workout (live subscription needed, else 403). Omit both for a personal log.' })),
    performed_at: DateTimeInput('When the workout was done; at most 5 minutes in the future.'),
    sets: Type.Array(SetInput, { minItems: 1, maxItems: MAX_SETS_PER_LOG, description: `1 to ${MAX_SETS_PER_LOG} sets, in the order done.` }),
  },
  { additionalProperties: false },
);
export type CreateLogBody = Static<typeof CreateLogBody>;

const PR_KINDS = ['max_load', 'est_1rm', 'max_volume', 'max_reps'] as const;
const PrKind = Type.Union(PR_KINDS.map((k) => Type.Literal(k)));

export const PersonalRecord = Type.Object({
  exercise_id: Uuid,
  kind: PrKind,
  value: Type.Number({ description: 'kg for max_load, est_1rm (Epley, 2 decimals) and max_volume (load × reps); a count for max_reps.' }),
  previous_value: Type.Number({ description: 'The record before this workout.' }),
  set_index: Int64({ description: 'Index in `sets` of the set that made it.' }),
});

const LoggedSet = Type.Object({
  exercise_id: Uuid,
  exercise_name: Type.String({ maxLength: EXERCISE_TEXT_MAX }),
  reps: Int64(),
  load_kg: Type.Number(),
  is_warmup: Type.Boolean(),
  rpe: Type.Union([Type.Number(), Type.Null()]),
});

const logFields = {
  id: Uuid,
  workout_id: Type.Union([Uuid, Type.Null()]),
  community_id: Type.Union([Uuid, Type.Null()]),
  performed_at: Timestamp,
  sets: Type.Array(LoggedSet, { maxItems: MAX_SETS_PER_LOG }),
  created_at: Timestamp,
};

export const WorkoutLog = Type.Object(logFields, { $id: 'WorkoutLog', title: 'WorkoutLog' });
export const CreatedWorkoutLog = Type.Object(
  {
    ...logFields,
    // One per exercise and kind at most: every set could be another exercise.
    prs: Type.Array(PersonalRecord, {
      maxItems: PR_KINDS.length * MAX_SETS_PER_LOG,
      description:
        'Personal records this workout set, at most one per exercise and kind (for its best set). A PR strictly beats every earlier working set of that exercise; ties, warm-ups and the very first set of an exercise are not PRs; a bodyweight set (load 0) counts for max_reps only. Ordered by `set_index`, then kind (max_load, est_1rm, max_volume, max_reps).',
    }),
  },
  { $id: 'CreatedWorkoutLog', title: 'CreatedWorkoutLog' },
);
