import type { ColumnType } from 'kysely';
import type { Defaulted, NullableTimestamp, Timestamp } from './column-types.js';

/** Tables of the training feature (migrations/0005_training.sql). */

export interface ExercisesTable {
  id: string;
  creator_id: string | null;
  slug: string | null;
  name: string;
  name_pt: string | null;
  muscle_group: string;
  secondary_muscles: string[];
  equipment: string[];
  kind: 'weighted' | 'bodyweight' | 'timed';
  video_url: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type ProgramLevel = 'beginner' | 'intermediate' | 'advanced';
export type ProgramGoal = 'hypertrophy' | 'strength' | 'endurance' | 'cutting';

export interface WorkoutProgramsTable {
  id: string;
  creator_id: string;
  community_id: string;
  name: string;
  description: Defaulted<string>;
  duration_weeks: number;
  frequency_per_week: number;
  level: ProgramLevel;
  goal: ProgramGoal;
  deleted_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WorkoutsTable {
  id: string;
  creator_id: string;
  program_id: string;
  name: string;
  position: number;
  deleted_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** numeric columns arrive as text from both engines; written as numbers. */
type Numeric = ColumnType<string, number, number>;
type NullableNumeric = ColumnType<string | null, number | null | undefined, number | null>;

export interface WorkoutExercisesTable {
  creator_id: string;
  workout_id: string;
  position: number;
  exercise_id: string;
  sets: number;
  reps: string;
  load_kg: NullableNumeric;
  rest_sec: number | null;
}

export interface WorkoutLogsTable {
  id: string;
  member_id: string;
  creator_id: string | null;
  community_id: string | null;
  workout_id: string | null;
  performed_at: Date | string;
  sets_count: number;
  created_at: Timestamp;
}

export interface WorkoutSetsTable {
  log_id: string;
  position: number;
  member_id: string;
  exercise_id: string;
  performed_at: Date | string;
  reps: number;
  load_kg: Numeric;
  is_warmup: Defaulted<boolean>;
  rpe: NullableNumeric;
}

export type PrKind = 'max_load' | 'est_1rm' | 'max_volume' | 'max_reps';

export interface PersonalRecordsTable {
  member_id: string;
  exercise_id: string;
  kind: PrKind;
  value: number;
  previous_value: number | null;
  log_id: string;
  set_position: number;
  creator_id: string | null;
  performed_at: Date | string;
  updated_at: Timestamp;
}

export interface MemberTrainingTable {
  member_id: string;
  version: number;
  updated_at: Defaulted<Timestamp>;
}
