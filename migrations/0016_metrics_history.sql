-- Daily metrics history (issue #15): one row per creator and UTC day for all of the creator's
-- communities (community_id null) and one per community, written once by the daily job
-- (metrics/history.ts), so a dashboard draws its lines from rows instead of recomputing the past.
create table metrics_daily (
  creator_id uuid not null references creators (id),
  community_id uuid references communities (id),
  day date not null,
  mrr_cents bigint not null,
  active_subscribers int not null,
  trialing int not null,
  new_subscribers int not null,
  lost_subscribers int not null,
  churn_rate_30d numeric(5, 4) not null,
  created_at timestamptz not null default now()
);
-- One row per scope and day: the job's claim (several nodes may run it; the second insert of a
-- day does nothing).
create unique index metrics_daily_key on metrics_daily (creator_id, coalesce(community_id, '00000000-0000-0000-0000-000000000000'::uuid), day);
