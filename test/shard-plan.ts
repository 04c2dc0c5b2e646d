/**
 * Where every table of the service's schema goes when PostgreSQL is sharded by creator (Citus,
 * distribution column `creator_id`; docs/sharding.md). test/shard-readiness.test.ts reads the
 * migrated schema and holds it to this list:
 *
 * - `creator`: distributed by `creator_id`. Checked: a NOT NULL `creator_id`, in every primary
 *   key / unique constraint / unique index, and on both sides of every foreign key (one to a
 *   reference table excepted: Citus allows those).
 * - `global`: a reference table (copied to every node) or the coordinator's own (migrations).
 * - `member-owned`: a member's rows, not a creator's: `reference` (copied to every node) or
 *   distributed by `member_id` (co-located with each other, not with the creators' tables).
 * - `processor-owned`: the processor's side, kept on the coordinator. The simulator's own schema
 *   (`processor_sim`) is not read at all.
 * - `known-gap`: holds a creator's data but breaks the rules; `gaps` lists exactly how (the test
 *   fails on a break not listed, and on a listed one that is gone) and `migration` what fixes it.
 */

export type Placement =
  | { class: 'creator' }
  | { class: 'global'; reason: string }
  | { class: 'member-owned'; placement: 'reference' | 'member_id'; reason: string }
  | { class: 'processor-owned'; reason: string }
  | { class: 'known-gap'; reason: string; migration: string; gaps: string[] };

/** The migrations the known gaps need (not written yet: docs/sharding.md). */
export const NEEDED = {
  compositeKeys:
    'composite_creator_keys: primary keys become (creator_id, id), processor ids unique per (creator_id, …), and every foreign key between creator tables (creator_id, x_id) → (creator_id, id)',
  scopedCredentials:
    'scoped_credentials: secrets name their creator (tribes_sk_<creator>_…, session and link tokens alike) so auth finds the shard first; then unique (creator_id, hash) and primary key (creator_id, id)',
  outgoingEventKeys:
    'outgoing_event_keys (src/modules/events/ is being changed): events get a foreign key to creators, webhook_attempts a creator_id backfilled from its delivery, and keys become (creator_id, …)',
  idempotencyScope:
    'idempotency_scope: store the scope as creator_id / member_id columns (or distribute by scope on its own: it is never joined)',
} as const;

const gap = (reason: string, migration: string, gaps: string[]): Placement => ({ class: 'known-gap', reason, migration, gaps });
const creator: Placement = { class: 'creator' };

export const SHARD_PLAN: Record<string, Placement> = {
  // Distributed by creator_id and already shaped for it.
  creator_members: creator,
  directory_totals: creator,
  challenge_score_bands: creator,
  member_activity: creator,
  creator_monthly_net: creator,
  metrics_cohorts: creator,
  metrics_days: creator,
  metrics_members: creator,
  metrics_revenue: creator,
  metrics_scopes: creator,
  metrics_spells: creator,
  metrics_tiers: creator,

  // Global: reference tables, or the coordinator's own.
  kysely_migration: { class: 'global', reason: 'migrations applied; run on the coordinator, which propagates DDL' },
  kysely_migration_lock: { class: 'global', reason: "the migrator's lock row; coordinator only" },
  creators: { class: 'global', reason: 'the tenant directory (one row per creator, unique email and processor account): a reference table' },
  exercises: { class: 'global', reason: "the catalog (creator_id null) plus creators' own exercises; small, read by every shard: a reference table" },

  // A member's rows: one member belongs to many creators.
  members: { class: 'member-owned', placement: 'reference', reason: 'one login across creators, unique email platform-wide: a reference table (rare writes)' },
  member_tokens: { class: 'member-owned', placement: 'member_id', reason: "a member's app sessions (looked up by token hash: the token must name the member first)" },
  member_training: { class: 'member-owned', placement: 'member_id', reason: "a member's training version counter" },
  workout_logs: { class: 'member-owned', placement: 'member_id', reason: "a member's logs; creator_id is null for personal ones" },
  workout_sets: { class: 'member-owned', placement: 'member_id', reason: "the sets of a member's logs" },
  personal_records: { class: 'member-owned', placement: 'member_id', reason: "a member's records across all creators" },

  // The processor's side.
  webhook_events: { class: 'processor-owned', reason: "the processor event inbox: an event names its connected account, not yet a creator; leased by any node" },

  // Creator data that breaks the rules today.
  account_link_tokens: gap('onboarding link tokens, found by hash before the creator is known', NEEDED.scopedCredentials, [
    'primary key (id)',
    'unique account_link_tokens_hash_key (token_hash)',
  ]),
  api_keys: gap('API keys, found by hash before the creator is known', NEEDED.scopedCredentials, [
    'primary key (id)',
    'unique api_keys_hash_key (key_hash)',
  ]),
  dashboard_login_links: gap('dashboard sign-in links, found by hash', NEEDED.scopedCredentials, [
    'primary key (id)',
    'unique dashboard_login_links_hash_key (token_hash)',
  ]),
  dashboard_sessions: gap('dashboard sessions, found by hash', NEEDED.scopedCredentials, [
    'primary key (id)',
    'unique dashboard_sessions_hash_key (token_hash)',
  ]),
  balance_transactions: gap("the creator's balance ledger (processor ids)", NEEDED.compositeKeys, ['primary key (id)']),
  challenge_day_ranks: gap("a challenge's end-of-day ranks (creator_id since 0029)", NEEDED.compositeKeys, [
    'primary key (challenge_id, member_id)',
    'foreign key (challenge_id) → challenges (id)',
  ]),
  challenge_participants: gap("a challenge's participants and scores", NEEDED.compositeKeys, [
    'primary key (member_id, challenge_id)',
    'foreign key (challenge_id) → challenges (id)',
  ]),
  challenges: gap("a community's challenges", NEEDED.compositeKeys, [
    'primary key (id)',
    'foreign key (community_id) → communities (id)',
    'foreign key (tier_min_id) → tiers (id)',
  ]),
  checkout_sessions: gap('hosted checkouts (found by processor session id)', NEEDED.compositeKeys, [
    'primary key (id)',
    'unique checkout_sessions_processor_key (processor_session_id)',
    'foreign key (tier_id) → tiers (id)',
  ]),
  communities: gap("a creator's communities (slug unique platform-wide for discovery)", `${NEEDED.compositeKeys}; the slug moves to a reference table of slugs`, [
    'primary key (id)',
    'unique communities_slug_key (slug)',
  ]),
  community_members: gap('the member directory per community', NEEDED.compositeKeys, [
    'foreign key (community_id) → communities (id)',
    'foreign key (subscription_id) → subscriptions (id)',
    'foreign key (tier_id) → tiers (id)',
  ]),
  events: gap('outgoing events (no foreign key to creators, so a creator can be deleted under them)', NEEDED.outgoingEventKeys, ['primary key (id)']),
  metrics_daily: gap('daily metrics history', NEEDED.compositeKeys, ['foreign key (community_id) → communities (id)']),
  payments: gap('paid invoices (found by processor invoice id)', NEEDED.compositeKeys, [
    'primary key (id)',
    'unique payments_invoice_key (processor_invoice_id)',
    'foreign key (subscription_id) → subscriptions (id)',
    'foreign key (tier_id) → tiers (id)',
  ]),
  payouts: gap("the creator's payouts (found by processor payout id)", NEEDED.compositeKeys, [
    'primary key (id)',
    'unique payouts_processor_key (processor_payout_id)',
  ]),
  poll_votes: gap('poll votes', NEEDED.compositeKeys, ['primary key (post_id, member_id, option)', 'foreign key (post_id) → posts (id)']),
  post_comments: gap('comments', NEEDED.compositeKeys, ['primary key (id)', 'foreign key (post_id) → posts (id)']),
  post_counts: gap("a post's counters (creator_id since 0029)", NEEDED.compositeKeys, [
    'primary key (post_id)',
    'foreign key (post_id) → posts (id)',
  ]),
  post_kudos: gap('kudos', NEEDED.compositeKeys, ['primary key (post_id, member_id)', 'foreign key (post_id) → posts (id)']),
  post_views: gap('views per member and day', NEEDED.compositeKeys, ['primary key (post_id, member_id, day)', 'foreign key (post_id) → posts (id)']),
  posts: gap("a community's posts", NEEDED.compositeKeys, [
    'primary key (id)',
    'foreign key (community_id) → communities (id)',
    'foreign key (tier_min_id) → tiers (id)',
  ]),
  processor_customers: gap("a member's customer on the creator's processor account", NEEDED.compositeKeys, [
    'unique processor_customers_customer_key (processor_customer_id)',
  ]),
  refunds: gap('refunds (found by processor refund id)', NEEDED.compositeKeys, [
    'primary key (id)',
    'unique refunds_processor_key (processor_refund_id)',
    'foreign key (subscription_id) → subscriptions (id)',
  ]),
  subscription_changes: gap("a subscription's history", NEEDED.compositeKeys, ['primary key (id)', 'foreign key (subscription_id) → subscriptions (id)']),
  subscriptions: gap('the subscription mirror (found by processor subscription id)', NEEDED.compositeKeys, [
    'primary key (id)',
    'unique subscriptions_processor_key (processor_subscription_id)',
    'foreign key (community_id) → communities (id)',
    'foreign key (scheduled_tier_id) → tiers (id)',
    'foreign key (tier_id) → tiers (id)',
  ]),
  tier_prices: gap("a tier's processor prices", NEEDED.compositeKeys, ['primary key (processor_price_id)', 'foreign key (tier_id) → tiers (id)']),
  tiers: gap("a community's tiers", NEEDED.compositeKeys, ['primary key (id)', 'foreign key (community_id) → communities (id)']),
  webhook_attempts: gap("a delivery's attempts (creator only through delivery_id → webhook_deliveries)", NEEDED.outgoingEventKeys, [
    'no creator_id column',
    'primary key (delivery_id, n)',
    'foreign key (delivery_id) → webhook_deliveries (id)',
  ]),
  webhook_deliveries: gap('deliveries of events to endpoints', NEEDED.outgoingEventKeys, [
    'primary key (id)',
    'unique webhook_deliveries_event_key (event_id, endpoint_id)',
    'foreign key (endpoint_id) → webhook_endpoints (id)',
    'foreign key (event_id) → events (id)',
  ]),
  webhook_endpoints: gap("a creator's webhook endpoints", NEEDED.outgoingEventKeys, ['primary key (id)']),
  workout_exercises: gap("a workout's exercises", NEEDED.compositeKeys, ['primary key (workout_id, "position")', 'foreign key (workout_id) → workouts (id)']),
  workout_programs: gap("a community's programs", NEEDED.compositeKeys, ['primary key (id)', 'foreign key (community_id) → communities (id)']),
  workouts: gap("a program's workouts", NEEDED.compositeKeys, ['primary key (id)', 'foreign key (program_id) → workout_programs (id)']),
  idempotency_keys: gap('replayable answers, keyed by a text scope (creator, member or admin)', NEEDED.idempotencyScope, [
    'no creator_id column',
    'primary key (scope, key, created_at)',
  ]),
};
