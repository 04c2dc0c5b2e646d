/** Tables of the member directory (migrations/0013_memberships.sql), kept by the mirror (subscriptions/membership.repo.ts). */
import type { ColumnType } from 'kysely';

export type MembershipState = 'active' | 'trial' | 'at_risk' | 'churned';

export interface CreatorMembersTable {
  creator_id: string;
  member_id: string;
  joined_at: Date;
  last_joined_at: Date;
  state: MembershipState;
  name_key: string;
  search: string;
  /**
   * The list's subscriptions, one per community (migrations/0035): community_id, tier_id,
   * status, joined_at (ISO 8601, UTC, milliseconds); the tier's name is read at the list.
   */
  /** Copies of the member's (migrations/0035; a trigger on members keeps them). */
  name: ColumnType<string, string | undefined, string>;
  email: ColumnType<string, string | undefined, string>;
  avatar_url: ColumnType<string | null, string | null | undefined, string | null>;
  subscriptions: ColumnType<Array<{ community_id: string; tier_id: string; status: string; joined_at: string }>, string | undefined, string>;
}

export interface CommunityMembersTable {
  creator_id: string;
  community_id: string;
  member_id: string;
  joined_at: Date;
  state: MembershipState;
  subscription_id: string;
  tier_id: string;
}

/** Members per directory scope (migrations/0030), kept by triggers on the two tables above. */
export interface DirectoryTotalsTable {
  creator_id: string;
  /** The all-communities scope (zeros), a community or a tier. */
  scope_id: string;
  members: number;
}

/** A member's last activity with a creator (migrations/0032), one row per directory row; written by activity/activity.ts. */
export interface MemberActivityTable {
  creator_id: string;
  member_id: string;
  last_active_at: Date | null;
  /** The directory row's state is churned (a copy kept by a trigger). */
  churned: boolean;
  /** The latest run of consecutive UTC days with a log (migrations/0036, kept by triggers on workout_logs); null: no log. */
  streak_from: ColumnType<string | null, never, never>;
  streak_to: ColumnType<string | null, never, never>;
  /**
   * The instants of the member's logs (performed_at) and of their comments on live posts
   * (created_at) after each `since`, ascending (migrations/0039, kept by triggers): the list's
   * 30-day counts.
   */
  logged_since: ColumnType<Date, never, never>;
  logged: ColumnType<Date[], never, never>;
  commented_since: ColumnType<Date, never, never>;
  commented: ColumnType<Date[], never, never>;
}
