import type { ColumnType, Generated } from 'kysely';
import type { Defaulted, NullableTimestamp, Timestamp } from './column-types.js';
import type {
  ExercisesTable,
  MemberTrainingTable,
  PersonalRecordsTable,
  WorkoutExercisesTable,
  WorkoutLogsTable,
  WorkoutProgramsTable,
  WorkoutSetsTable,
  WorkoutsTable,
} from './types.training.js';

import type { CommunityMembersTable, CreatorMembersTable, DirectoryTotalsTable, MemberActivityTable } from './types.members.js';
import type { ChallengeDayRanksTable, ChallengeParticipantsTable, ChallengeScoreBandsTable, ChallengesTable } from './types.challenges.js';
import type { FeedTables } from './types.posts.js';
import type { MetricsTables } from './types.metrics.js';
import type { EventTables } from './types.events.js';
import type { AccountLinkTokensTable, ApiKeysTable, CreatorsTable, DashboardLoginLinksTable, DashboardSessionsTable } from './types.creators.js';

export type * from './types.training.js';
export type * from './types.members.js';
export type * from './types.challenges.js';
export type * from './types.posts.js';
export type * from './types.creators.js';
export type * from './types.events.js';

export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  request_hash: string;
  state: 'in_progress' | 'done' | 'data'; // data: what its route rebuilds the answer from (0038)
  status_code: number | null;
  content_type: string | null;
  response_body: string | null;
  created_at: Timestamp;
  locked_at: Timestamp;
}

export type CommunityCategory = 'musculacao' | 'funcional' | 'yoga' | 'crossfit' | 'corrida' | 'nutricao' | 'outros';

export interface CommunitiesTable {
  id: string;
  creator_id: string;
  name: string;
  slug: string;
  description: string | null;
  category: CommunityCategory;
  is_public: Defaulted<boolean>;
  cover_image_url: string | null;
  status: Defaulted<'active' | 'paused'>;
  paused_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** convergePause's single-writer lease (migration 0011). */
  pause_lease_token: ColumnType<string | null, string | null | undefined, string | null>;
  pause_lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  pause_rerun: Defaulted<boolean>;
  /** Posts not deleted (migration 0015): the feed's total. */
  posts_count: Defaulted<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type BillingPeriod = 'monthly' | 'quarterly' | 'yearly';

export interface TiersTable {
  id: string;
  creator_id: string;
  community_id: string;
  name: string;
  price_cents: number;
  billing_period: BillingPeriod;
  trial_days: Defaulted<number>;
  benefits: ColumnType<string[], string | undefined, string>;
  is_active: Defaulted<boolean>;
  level: number | null;
  currency: Defaulted<string>;
  processor_product_id: string | null;
  processor_price_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TierPricesTable {
  processor_price_id: string;
  creator_id: string;
  tier_id: string;
  price_cents: number;
  billing_period: BillingPeriod;
  currency: string;
  created_at: Timestamp;
}

export interface MembersTable {
  id: string;
  name: string;
  email: string;
  avatar_url: string | null;
  password_hash: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** As the processor says it (subscriptions/status.ts says which are live). */
export type SubscriptionStatus = 'trialing' | 'active' | 'past_due' | 'canceled' | 'incomplete' | 'incomplete_expired' | 'unpaid' | 'paused';

export interface SubscriptionsTable {
  id: string;
  creator_id: string;
  community_id: string;
  tier_id: string;
  member_id: string;
  status: SubscriptionStatus;
  price_cents: number;
  billing_period: BillingPeriod;
  current_period_start: Date | null;
  current_period_end: Date | null;
  cancel_at_period_end: Defaulted<boolean>;
  canceled_at: Date | null;
  processor_subscription_id: string | null;
  processor_customer_id: string | null;
  trial_end: Date | null;
  ended_at: Date | null;
  /** When the mirror first saw it in a not-live status other than canceled (migrations/0020). */
  lapsed_at: Date | null;
  /** The processor's Subscription Schedule attached to it, as last mirrored (migrations/0024). */
  processor_schedule_id: Defaulted<string | null>;
  /** The tier the schedule moves it to at `scheduled_change_at` (a downgrade at period end); both null when none. */
  scheduled_tier_id: Defaulted<string | null>;
  scheduled_change_at: Defaulted<Date | null>;
  cancellation_reason: string | null;
  canceled_by_pause: Defaulted<boolean>;
  canceled_by_creator: Defaulted<boolean>;
  synced_seq: Defaulted<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MemberTokensTable {
  id: string;
  member_id: string;
  token_hash: Uint8Array;
  created_at: Timestamp;
  expires_at: Date | string;
  revoked_at: NullableTimestamp;
}

export interface ProcessorCustomersTable {
  creator_id: string;
  member_id: string;
  processor_customer_id: string;
  created_at: Timestamp;
}

export interface CheckoutSessionsTable {
  id: string;
  creator_id: string;
  member_id: string;
  tier_id: string;
  processor_session_id: string;
  url: string;
  status: Defaulted<'open' | 'complete' | 'expired'>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookEventsTable {
  id: string;
  type: string;
  account: string | null;
  payload: ColumnType<unknown, string, string>;
  received_at: Timestamp;
  processed_at: NullableTimestamp;
  attempts: Defaulted<number>;
  next_attempt_at: Timestamp;
  last_error: string | null;
  /** Parked after too many failed attempts (migration 0012); an operator retries it. */
  dead_at: NullableTimestamp;
}

export interface RefundsTable {
  id: string;
  creator_id: string;
  subscription_id: string;
  amount_cents: number;
  currency: string;
  status: string;
  processor_refund_id: string;
  processor_charge_id: string | null;
  /** The payment intent it gives back (migrations/0023); null until the refund mirror read it. */
  processor_payment_intent_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Date | string;
}

export type PayoutStatus = 'pending' | 'in_transit' | 'paid' | 'failed' | 'canceled';

export interface BalanceTransactionsTable {
  id: string;
  creator_id: string;
  type: string;
  amount_cents: number;
  fee_cents: number;
  net_cents: number;
  currency: string;
  source: string | null;
  created_at: Timestamp;
  copied_at: Defaulted<Timestamp>;
}

export interface CreatorMonthlyNetTable {
  creator_id: string;
  currency: string;
  month: ColumnType<Date, string, string>;
  net_cents: number;
}

export interface PayoutsTable {
  id: string;
  creator_id: string;
  processor_payout_id: string;
  amount_cents: number;
  currency: string;
  status: PayoutStatus;
  method: 'automatic' | 'manual';
  arrival_date: Date | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Timestamp;
  synced_seq: number;
}

export interface PaymentsTable {
  id: string;
  creator_id: string;
  subscription_id: string;
  processor_invoice_id: string;
  processor_payment_intent_id: string;
  /** The tier the payment paid for (migration 0025); null for payments mirrored before it. */
  tier_id: ColumnType<string | null, string | null | undefined, string | null>;
  amount_cents: number;
  currency: string;
  paid_at: Date | string;
}

/** A subscription's history as the mirror recorded it (migrations/0013). */
export interface SubscriptionChangesTable {
  id: string;
  creator_id: string;
  subscription_id: string;
  recorded_at: Generated<Date>;
  status: SubscriptionStatus;
  cancel_at_period_end: boolean;
  tier_id: string;
  price_cents: number;
  /** Recorded from migration 0031 on; null before. */
  billing_period: BillingPeriod | null;
  current_period_end: Date | null;
}

export interface Database extends FeedTables, MetricsTables, EventTables {
  creators: CreatorsTable;
  api_keys: ApiKeysTable;
  account_link_tokens: AccountLinkTokensTable;
  dashboard_login_links: DashboardLoginLinksTable;
  dashboard_sessions: DashboardSessionsTable;
  idempotency_keys: IdempotencyKeysTable;
  communities: CommunitiesTable;
  tiers: TiersTable;
  tier_prices: TierPricesTable;
  members: MembersTable;
  subscriptions: SubscriptionsTable;
  member_tokens: MemberTokensTable;
  processor_customers: ProcessorCustomersTable;
  checkout_sessions: CheckoutSessionsTable;
  webhook_events: WebhookEventsTable;
  refunds: RefundsTable;
  exercises: ExercisesTable;
  workout_programs: WorkoutProgramsTable;
  workouts: WorkoutsTable;
  workout_exercises: WorkoutExercisesTable;
  workout_logs: WorkoutLogsTable;
  workout_sets: WorkoutSetsTable;
  personal_records: PersonalRecordsTable;
  member_training: MemberTrainingTable;
  payouts: PayoutsTable;
  balance_transactions: BalanceTransactionsTable;
  creator_monthly_net: CreatorMonthlyNetTable;
  payments: PaymentsTable;
  creator_members: CreatorMembersTable;
  community_members: CommunityMembersTable;
  directory_totals: DirectoryTotalsTable;
  member_activity: MemberActivityTable;
  subscription_changes: SubscriptionChangesTable;
  challenges: ChallengesTable;
  challenge_participants: ChallengeParticipantsTable;
  challenge_day_ranks: ChallengeDayRanksTable;
  challenge_score_bands: ChallengeScoreBandsTable;
}

export type { Generated };
