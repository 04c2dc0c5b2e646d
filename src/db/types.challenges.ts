import type { ColumnType, Generated } from 'kysely';

/** Tables of challenges and their leaderboards (migrations/0014_challenges.sql). */

export type ChallengeMetric = 'workouts_count' | 'workouts_with_exercise' | 'volume_kg' | 'streak_days';

export interface ChallengesTable {
  id: string;
  creator_id: string;
  community_id: string;
  name: string;
  description: Generated<string>;
  metric: ChallengeMetric;
  exercise_id: string | null;
  duration_days: number;
  starts_at: Date;
  ends_at: Date;
  tier_min_id: string | null;
  canceled_at: Date | null;
  participants_count: Generated<number>;
  ranked_day: ColumnType<string | null, string | null | undefined, string | null>;
  /** When challenge.finished was written (migrations/0028); null until the challenge has ended and a node told. */
  finished_event_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ChallengeParticipantsTable {
  member_id: string;
  challenge_id: string;
  creator_id: string;
  joined_at: Date;
  /** numeric(16,2): the driver returns text. */
  score: ColumnType<string, string | number | undefined, string | number>;
  reached_at: Date;
  days: string | null;
  /** When the member's subscription stopped qualifying (migrations/0020); logs written since do not count. Null: scoring. */
  scoring_stopped_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface ChallengeDayRanksTable {
  challenge_id: string;
  /** The challenge's creator (migration 0029: the shard key). */
  creator_id: string;
  member_id: string;
  day: ColumnType<string, string, string>;
  rank: number;
}

/** Participants per challenge and score band (migrations/0037), kept by triggers on challenge_participants; a band's count is the sum of its slots. */
export interface ChallengeScoreBandsTable {
  creator_id: string;
  challenge_id: string;
  /** score_band(score): whole numbers below 1,000, three significant digits above. */
  band: ColumnType<string, string, string>;
  slot: number;
  participants: number;
}
