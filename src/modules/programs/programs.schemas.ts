import { Type, type Static } from '@sinclair/typebox';
import { Int64, PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';
import { MUSCLE_GROUPS } from '../exercises/catalog.data.js';
import { EXERCISE_TEXT_MAX } from '../exercises/exercises.schemas.js';

const Level = Type.Union([Type.Literal('beginner'), Type.Literal('intermediate'), Type.Literal('advanced')], { description: 'Who the program is for.' });
const Goal = Type.Union([Type.Literal('hypertrophy'), Type.Literal('strength'), Type.Literal('endurance'), Type.Literal('cutting')], {
  description: 'What the program trains for.',
});
/** A program's or workout's name: also the bound of every answer that names one. */
export const PROGRAM_NAME_MAX = 200;
const DESCRIPTION_MAX = 20_000;
const Name = Type.String({ minLength: 1, maxLength: PROGRAM_NAME_MAX, pattern: '\\S', description: '1 to 200 characters, not blank.' });
const Description = Type.String({ maxLength: DESCRIPTION_MAX, description: 'Markdown, up to 20,000 characters.' });
const DurationWeeks = Type.Integer({ format: 'int32', minimum: 1, maximum: 52, description: 'Length in weeks, 1 to 52.' });
const FrequencyPerWeek = Type.Integer({ format: 'int32', minimum: 1, maximum: 7, description: 'Workouts per week, 1 to 7.' });

export const REPS_PATTERN = '^(?:[1-9][0-9]{0,2}(?:-[1-9][0-9]{0,2})?|AMRAP|[1-9][0-9]{0,3}s)$';

const Reps = Type.String({
  pattern: REPS_PATTERN,
  maxLength: 7, // the longest the pattern allows ("999-999")
  description: 'Repetitions as text: a count ("8"), a range ("8-12", low below high), "AMRAP" (as many as possible) or seconds ("30s").',
});

const ExerciseEntryInput = Type.Object(
  {
    exercise_id: Type.String({ format: 'uuid', maxLength: 36, description: 'A catalog exercise or one of your own.' }),
    sets: Type.Integer({ format: 'int32', minimum: 1, maximum: 20, description: 'Sets, 1 to 20.' }),
    reps: Reps,
    load_kg: Type.Optional(
      Type.Union([Type.Number({ minimum: 0, maximum: 9999.99, description: 'Prescribed load in kilograms, at most 2 decimals.' }), Type.Null()]),
    ),
    rest_sec: Type.Optional(Type.Union([Type.Integer({ format: 'int32', minimum: 0, maximum: 900, description: 'Rest after each set, 0 to 900 seconds.' }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type ExerciseEntryInput = Static<typeof ExerciseEntryInput>;

const ENTRIES_MAX = 50;
/** Workouts one program holds: creation stops here, and a reorder lists at most this many. */
export const WORKOUTS_MAX = 500;
const ExerciseEntries = Type.Array(ExerciseEntryInput, { minItems: 1, maxItems: ENTRIES_MAX, description: '1 to 50 exercise entries, in the order they are done.' });

export const ExerciseEntry = Type.Object({
  position: Int64({ description: 'Order within the workout, from 0.' }),
  exercise_id: Uuid,
  exercise_name: Type.String({ maxLength: EXERCISE_TEXT_MAX }),
  muscle_group: Type.String({ enum: [...MUSCLE_GROUPS], description: "The exercise's prime mover." }),
  sets: Int64(),
  reps: Reps,
  load_kg: Type.Union([Type.Number(), Type.Null()]),
  rest_sec: Type.Union([Int64(), Type.Null()]),
});

export const Workout = Type.Object(
  {
    id: Uuid,
    program_id: Uuid,
    name: Type.String({ maxLength: PROGRAM_NAME_MAX }),
    position: Int64({ description: 'Order within the program, from 0.' }),
    exercises: Type.Array(ExerciseEntry, { maxItems: ENTRIES_MAX }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Workout', title: 'Workout' },
);

const programFields = {
  id: Uuid,
  community_id: Uuid,
  name: Type.String({ maxLength: PROGRAM_NAME_MAX }),
  description: Type.String({ maxLength: DESCRIPTION_MAX, description: 'Markdown.' }),
  duration_weeks: Int64(),
  frequency_per_week: Int64(),
  level: Level,
  goal: Goal,
  workouts_count: Int64(),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Program = Type.Object(programFields, { $id: 'WorkoutProgram', title: 'WorkoutProgram' });
export const ProgramDetail = Type.Object(
  { ...programFields, workouts: Type.Array(Type.Ref(Workout), { description: 'In program order.' }) },
  { $id: 'WorkoutProgramDetail', title: 'WorkoutProgramDetail' },
);

export const CreateProgramBody = Type.Object(
  {
    community_id: Uuid,
    name: Name,
    description: Type.Optional(Description),
    duration_weeks: DurationWeeks,
    frequency_per_week: FrequencyPerWeek,
    level: Level,
    goal: Goal,
  },
  { additionalProperties: false },
);
export type CreateProgramBody = Static<typeof CreateProgramBody>;

export const UpdateProgramBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    duration_weeks: Type.Optional(DurationWeeks),
    frequency_per_week: Type.Optional(FrequencyPerWeek),
    level: Type.Optional(Level),
    goal: Type.Optional(Goal),
  },
  { additionalProperties: false, description: 'Only the fields sent change. A program stays in its community.' },
);
export type UpdateProgramBody = Static<typeof UpdateProgramBody>;

export const ListProgramsQuery = Type.Object(
  { ...PaginationQuery, community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only programs of this community (404 if it is not yours).' })) },
  { additionalProperties: false },
);
export type ListProgramsQuery = Static<typeof ListProgramsQuery>;

export const CreateWorkoutBody = Type.Object({ name: Name, exercises: ExerciseEntries }, { additionalProperties: false });
export type CreateWorkoutBody = Static<typeof CreateWorkoutBody>;

export const UpdateWorkoutBody = Type.Object(
  { name: Type.Optional(Name), exercises: Type.Optional(ExerciseEntries) },
  { additionalProperties: false, description: 'Only the fields sent change; `exercises` replaces the whole list.' },
);
export type UpdateWorkoutBody = Static<typeof UpdateWorkoutBody>;

export const WorkoutOrderBody = Type.Object(
  {
    workout_ids: Type.Array(Type.String({ format: 'uuid', maxLength: 36 }), {
      maxItems: WORKOUTS_MAX,
      description: `Every workout of the program exactly once, in the new order (a program holds at most ${WORKOUTS_MAX}).`,
    }),
  },
  { additionalProperties: false },
);
export type WorkoutOrderBody = Static<typeof WorkoutOrderBody>;

export const Deleted = Type.Object({ id: Uuid, deleted: Type.Literal(true) });
