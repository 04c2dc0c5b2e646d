import type { NewEvent } from '../events/outbox.js';

interface CreatedLogLike {
  id: string;
  workout_id: string | null;
  community_id: string | null;
  performed_at: string;
  sets: Array<{ exercise_id: string; exercise_name: string }>;
  prs: Array<{ exercise_id: string; kind: string; value: number; previous_value: number }>;
}

/**
 * The outgoing events of a log written outside the logging statement (a back-dated one): the
 * same `workout.logged` and `pr.achieved` data the statement builds in SQL (log-batch.ts
 * log_events). A personal log (no community) sends nothing.
 */
export function logEvents(memberId: string, log: CreatedLogLike): NewEvent[] {
  if (!log.community_id) return [];
  const names = new Map(log.sets.map((s) => [s.exercise_id, s.exercise_name]));
  return [
    {
      type: 'workout.logged',
      data: { log_id: log.id, member_id: memberId, community_id: log.community_id, workout_id: log.workout_id, performed_at: log.performed_at, sets_count: log.sets.length, prs_count: log.prs.length },
    },
    ...log.prs.map((p) => ({
      type: 'pr.achieved' as const,
      data: {
        member_id: memberId,
        log_id: log.id,
        community_id: log.community_id,
        exercise_id: p.exercise_id,
        exercise_name: names.get(p.exercise_id) ?? '',
        kind: p.kind,
        value: p.value,
        previous_value: p.previous_value,
        performed_at: log.performed_at,
      },
    })),
  ];
}
