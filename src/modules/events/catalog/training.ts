import { Type } from '@sinclair/typebox';
import { Int64, Timestamp, Uuid } from '../../../http/schemas.js';
import { defineEvent, EventData } from './define.js';

const PR_KIND = Type.Union(['max_load', 'est_1rm', 'max_volume', 'max_reps'].map((k) => Type.Literal(k)), {
  description: 'max_load: heaviest load (kg); est_1rm: estimated one-rep max (Epley, kg); max_volume: load × reps of one set (kg); max_reps: most reps of one set.',
});

/** Training: logs in one of the creator's communities and the PRs they set. A personal log (no community) is nobody's business but the member's: no event. */
export const workoutLogged = defineEvent(
  'workout.logged',
  'A member logged a workout in one of your communities (a program workout, or training for the community). Sent once per log, in the same transaction as the log.',
  EventData('WorkoutLoggedData', {
    log_id: Uuid,
    member_id: Uuid,
    community_id: Uuid,
    workout_id: Type.Union([Uuid, Type.Null()], { description: 'The program workout followed, or null for training without one.' }),
    performed_at: Timestamp,
    sets_count: Int64({ description: 'Sets logged, warm-ups included.' }),
    prs_count: Int64({ description: 'Personal records this log set (each also sent as `pr.achieved`).' }),
  }),
);

export const prAchieved = defineEvent(
  'pr.achieved',
  'A member set a personal record in a workout logged in one of your communities: one event per exercise and kind the workout beat (the same PRs the log answer lists). A first-ever set of an exercise is a baseline, not a PR.',
  EventData('PrAchievedData', {
    member_id: Uuid,
    log_id: Uuid,
    community_id: Uuid,
    exercise_id: Uuid,
    exercise_name: Type.String({ maxLength: 200 }),
    kind: PR_KIND,
    value: Type.Number({ description: 'The new record: kg, or a count for max_reps.' }),
    previous_value: Type.Number({ description: 'The record it beat.' }),
    performed_at: Timestamp,
  }),
);
