import type { ColumnType, Generated } from 'kysely';

/** The daily metrics history (migrations/0016_metrics_history.sql). */
export interface MetricsDailyTable {
  creator_id: string;
  community_id: string | null;
  day: ColumnType<string, string, string>;
  /** bigint and numeric: the driver returns text. */
  mrr_cents: ColumnType<string, string | number, string | number>;
  active_subscribers: number;
  trialing: number;
  new_subscribers: number;
  lost_subscribers: number;
  churn_rate_30d: ColumnType<string, string | number, string | number>;
  /** The churn's numerator and denominator, the next day's start (migrations/0033); null on rows written before it. */
  lost_30d: number | null;
  base_30d: number | null;
  created_at: Generated<Date>;
}

/** The creator metrics' counters (migrations/0017_metrics_aggregates.sql; metrics/aggregates.ts writes them, in SQL). */
export interface MetricsScopesTable {
  creator_id: string;
  /** A community, or ALL_COMMUNITIES. */
  scope_id: string;
  trialing: number;
  activity_folded_at: Date | null;
  /** Sums of the scope (migrations/0018): paying members; on community rows, MRR and subscriptions in status `active`. */
  paying: number;
  mrr_cents: ColumnType<string, string | number, string | number>;
  active_subscriptions: number;
}

export interface MetricsTiersTable {
  creator_id: string;
  tier_id: string;
  mrr_cents: ColumnType<string, string | number, string | number>;
  members_all: number;
  members_community: number;
  /** Subscriptions to the tier in status `active` (migrations/0018): the tier's and community's active_subscribers. */
  active_subscriptions: number;
}

export interface MetricsRevenueTable {
  creator_id: string;
  community_id: string;
  month: ColumnType<string, string, string>;
  charged_cents: ColumnType<string, string | number, string | number>;
  refunded_cents: ColumnType<string, string | number, string | number>;
}

export interface MetricsTables {
  metrics_daily: MetricsDailyTable;
  metrics_scopes: MetricsScopesTable;
  metrics_tiers: MetricsTiersTable;
  metrics_revenue: MetricsRevenueTable;
}
