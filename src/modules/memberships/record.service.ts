import type { Static } from '@sinclair/typebox';
import { iso, isoOrNull } from '../../db/tx.js';
import { notFound } from '../../http/errors.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { Participation } from '../challenges/challenges.schemas.js';
import { presentSubscription } from '../subscriptions/subscriptions.service.js';
import type { TrainingViewRepo } from '../workout-logs/creator-view.repo.js';
import { displayValue } from '../workout-logs/prs.js';
import type { DirectoryRepo } from './directory.repo.js';
import { presentMember } from './directory.service.js';
import type { HistoryRow, RecordRepo } from './record.repo.js';

/** How many executed workouts the member record carries; the rest are paged by GET /members/:id/workout-logs. */
export const RECENT_WORKOUTS = 20;

export interface RecordDeps {
  directory: DirectoryRepo;
  records: RecordRepo;
  training: TrainingViewRepo;
  /** The member's challenges in this creator's communities, with score and rank (challenges.service.ts). */
  challenges: { participationsOf(creatorId: string, memberId: string): Promise<Array<Static<typeof Participation>>> };
  now: () => Date;
}

function presentHistory(s: HistoryRow) {
  return {
    ...presentSubscription(s),
    community_name: s.community_name,
    tier_name: s.tier_name,
    changes: s.changes.map((c) => ({ ...c, recorded_at: iso(c.recorded_at), price_cents: Number(c.price_cents), current_period_end: isoOrNull(c.current_period_end) })),
    payments: s.payments.map((p) => ({ ...p, amount_cents: Number(p.amount_cents), paid_at: iso(p.paid_at) })),
    refunds: s.refunds.map((r) => ({ ...r, amount_cents: Number(r.amount_cents), created_at: iso(r.created_at) })),
  };
}

type ExecutedRow = Awaited<ReturnType<TrainingViewRepo['executedWorkouts']>>[number];
const presentWorkout = (w: ExecutedRow) => ({
  id: w.id,
  community_id: w.community_id,
  workout_id: w.workout_id,
  workout_name: w.workout_name,
  performed_at: iso(w.performed_at),
  sets_count: w.sets_count,
  created_at: iso(w.created_at),
});

export const workoutLogsPath = (memberId: string) => `/api/v1/members/${memberId}/workout-logs`;

/** The full member record a creator opens from the list (GET /members/:id) and its workout pages. */
export function createRecordService({ directory, records, training, challenges, now }: RecordDeps) {
  async function memberOf(creatorId: string, memberId: string) {
    const row = await directory.find(creatorId, memberId, now());
    // Someone who never subscribed to this creator is not theirs to see, whoever else they belong to.
    if (!row) throw notFound('Member');
    return row;
  }

  return {
    async get(creatorId: string, memberId: string) {
      const row = await memberOf(creatorId, memberId);
      const [history, recent, total, records_, participations] = await Promise.all([
        records.subscriptionHistory(creatorId, memberId),
        training.executedWorkouts(creatorId, memberId, { offset: 0, limit: RECENT_WORKOUTS }),
        training.countExecutedWorkouts(creatorId, memberId),
        training.personalRecords(creatorId, memberId),
        challenges.participationsOf(creatorId, memberId),
      ]);
      return {
        ...presentMember(row),
        status: row.status,
        joined_at: row.joined_at,
        subscription_history: history.map(presentHistory),
        workouts: {
          data: recent.map(presentWorkout),
          total,
          next: total > RECENT_WORKOUTS ? `${workoutLogsPath(memberId)}?page=2&limit=${RECENT_WORKOUTS}` : null,
        },
        personal_records: records_.map((r) => ({
          exercise_id: r.exercise_id,
          exercise_name: r.exercise_name,
          kind: r.kind,
          value: displayValue(Number(r.value)),
          previous_value: displayValue(Number(r.previous_value)),
          log_id: r.log_id,
          performed_at: iso(r.performed_at),
        })),
        challenges: participations,
      };
    },

    async workoutLogs(creatorId: string, memberId: string, query: PageQuery) {
      await memberOf(creatorId, memberId);
      const [rows, total] = await Promise.all([
        training.executedWorkouts(creatorId, memberId, { offset: offsetOf(query), limit: query.limit }),
        training.countExecutedWorkouts(creatorId, memberId),
      ]);
      return paginated(rows.map(presentWorkout), total, query);
    },
  };
}

export type RecordService = ReturnType<typeof createRecordService>;
