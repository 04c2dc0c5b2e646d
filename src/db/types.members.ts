/** Tables of the member directory (migrations/0013_memberships.sql), kept by the mirror (subscriptions/membership.repo.ts). */

export type MembershipState = 'active' | 'trial' | 'at_risk' | 'churned';

export interface CreatorMembersTable {
  creator_id: string;
  member_id: string;
  joined_at: Date;
  last_joined_at: Date;
  state: MembershipState;
  last_active_at: Date | null;
  name_key: string;
  search: string;
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
