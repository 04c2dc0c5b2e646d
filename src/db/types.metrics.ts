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
  created_at: Generated<Date>;
}

export interface MetricsTables {
  metrics_daily: MetricsDailyTable;
}
