import { Type, type Static } from '@sinclair/typebox';
import { PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';
import { EQUIPMENT, EXERCISE_KINDS, MUSCLE_GROUPS } from './catalog.data.js';

/**
 * Bounds of what an exercise answer can hold: a creator's own exercise keeps to its create body
 * (below); catalog.data.test.ts holds the catalog to them, and config.ts the video base URL.
 */
export const EXERCISE_TEXT_MAX = 120;
export const VIDEO_URL_MAX = 2000;
const SECONDARY_MAX = 12;
const EQUIPMENT_MAX = 6;

const literals = <T extends string>(values: readonly T[], description: string) => Type.Union(values.map((v) => Type.Literal(v)), { description });

export const MuscleGroup = literals(
  MUSCLE_GROUPS,
  'Prime mover, one of a closed set: chest, back (lats, rhomboids, trapezius, spinal erectors), shoulders, biceps, triceps, forearms, core, glutes, quadriceps, hamstrings, calves, full_body, cardio.',
);
export const Equipment = literals(EQUIPMENT, 'Equipment, one of a closed set (`bodyweight` means none at all).');
export const ExerciseKind = literals(
  EXERCISE_KINDS,
  '`weighted`: an external load is logged (`load_kg`); `bodyweight`: reps only (load 0); `timed`: holds and intervals, `reps` carries seconds.',
);

export const Exercise = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: EXERCISE_TEXT_MAX }),
    name_pt: Type.Union([Type.String({ maxLength: EXERCISE_TEXT_MAX }), Type.Null()], { description: 'Brazilian Portuguese name (catalog exercises).' }),
    slug: Type.Union([Type.String({ maxLength: EXERCISE_TEXT_MAX, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' }), Type.Null()], {
      description: 'Stable kebab-case key of a catalog exercise; null for a custom one.',
    }),
    muscle_group: MuscleGroup,
    secondary_muscles: Type.Array(MuscleGroup, { maxItems: SECONDARY_MAX, uniqueItems: true }),
    equipment: Type.Array(Equipment, { maxItems: EQUIPMENT_MAX, uniqueItems: true }),
    kind: ExerciseKind,
    video_url: Type.Union([Type.String({ maxLength: VIDEO_URL_MAX, pattern: '^https?://' }), Type.Null()], {
      description: 'Demonstration video. Catalog exercises: the operator-configured base URL (`EXERCISE_VIDEO_BASE_URL`) + `/` + slug; custom ones: what the creator set, or null.',
    }),
    custom: Type.Boolean({ description: "true for the creator's own exercise, false for the shared catalog." }),
    created_at: Timestamp,
  },
  { $id: 'Exercise', title: 'Exercise' },
);

export const ListExercisesQuery = Type.Object(
  {
    ...PaginationQuery,
    muscle_group: Type.Optional(MuscleGroup),
    equipment: Type.Optional(Type.Union([...EQUIPMENT.map((v) => Type.Literal(v))], { description: 'Only exercises that use this equipment.' })),
    kind: Type.Optional(ExerciseKind),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Case-insensitive text in the English or Portuguese name.' })),
  },
  { additionalProperties: false },
);
export type ListExercisesQuery = Static<typeof ListExercisesQuery>;

export const CreateExerciseBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: EXERCISE_TEXT_MAX, pattern: '\\S', description: "1 to 120 characters; unique among the creator's own exercises (case-insensitive)." }),
    muscle_group: MuscleGroup,
    secondary_muscles: Type.Optional(Type.Array(MuscleGroup, { maxItems: SECONDARY_MAX, uniqueItems: true, description: 'Other groups worked; not the primary one.' })),
    equipment: Type.Array(Equipment, { minItems: 1, maxItems: EQUIPMENT_MAX, uniqueItems: true }),
    kind: ExerciseKind,
    video_url: Type.Optional(Type.String({ format: 'uri', pattern: '^https://', maxLength: VIDEO_URL_MAX, description: 'An https link to a demonstration video.' })),
  },
  { additionalProperties: false },
);
export type CreateExerciseBody = Static<typeof CreateExerciseBody>;
