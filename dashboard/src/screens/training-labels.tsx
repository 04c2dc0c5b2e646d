import type { Schemas } from '../api/types.js';

export type Program = Schemas['WorkoutProgram'];
export type ProgramDetail = Schemas['WorkoutProgramDetail'];
export type Workout = Schemas['Workout'];
export type Exercise = Schemas['Exercise'];
export type Challenge = Schemas['Challenge'];
export type Ranking = Schemas['Ranking'];

export const LEVEL: Record<Program['level'], string> = { beginner: 'Beginner', intermediate: 'Intermediate', advanced: 'Advanced' };
export const GOAL: Record<Program['goal'], string> = { hypertrophy: 'Muscle growth', strength: 'Strength', endurance: 'Endurance', cutting: 'Fat loss' };

export const MUSCLE: Record<Exercise['muscle_group'], string> = {
  chest: 'Chest',
  back: 'Back',
  shoulders: 'Shoulders',
  biceps: 'Biceps',
  triceps: 'Triceps',
  forearms: 'Forearms',
  core: 'Core',
  glutes: 'Glutes',
  quadriceps: 'Quadriceps',
  hamstrings: 'Hamstrings',
  calves: 'Calves',
  full_body: 'Full body',
  cardio: 'Cardio',
};

/** What scores, in the words of GET /challenges' `metric` description. */
export const METRIC: Record<Challenge['metric'], { label: string; unit: [one: string, many: string]; explain: string }> = {
  workouts_count: { label: 'Workouts logged', unit: ['workout', 'workouts'], explain: 'Every workout a member logs in the window counts one.' },
  workouts_with_exercise: { label: 'Workouts with one exercise', unit: ['workout', 'workouts'], explain: 'Every workout with at least one set of the chosen exercise (warm-ups included) counts one.' },
  volume_kg: { label: 'Volume lifted', unit: ['kg', 'kg'], explain: 'Repetitions × load in kg, summed over working sets (warm-ups excluded).' },
  streak_days: { label: 'Longest streak', unit: ['day', 'days'], explain: 'The longest run of consecutive days (UTC) with at least one logged workout.' },
};

export const STATUS: Record<Challenge['status'], { label: string; tone: 'good' | 'warn' | 'bad' | 'neutral' }> = {
  scheduled: { label: 'Scheduled', tone: 'neutral' },
  running: { label: 'Running', tone: 'good' },
  finished: { label: 'Finished', tone: 'neutral' },
  canceled: { label: 'Canceled', tone: 'bad' },
};
