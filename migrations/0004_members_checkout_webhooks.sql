-- Members with their own login, hosted checkout, the webhook inbox, and the subscription
-- mirror's remaining columns.

-- Member accounts. password_hash is scrypt in PHC-like form; tokens are stored hashed.
alter table members add column password_hash text;

create table member_tokens (
  id uuid primary key,
  member_id uuid not null references members (id),
  token_hash bytea not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create unique index member_tokens_hash_key on member_tokens (token_hash);
create index member_tokens_member_idx on member_tokens (member_id, created_at);

-- The member's customer on each creator's connected account (customers live on the account).
create table processor_customers (
  creator_id uuid not null references creators (id),
  member_id uuid not null references members (id),
  processor_customer_id text not null,
  created_at timestamptz not null default now(),
  primary key (creator_id, member_id)
);
create unique index processor_customers_customer_key on processor_customers (processor_customer_id);

create table checkout_sessions (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  member_id uuid not null references members (id),
  tier_id uuid not null references tiers (id),
  processor_session_id text not null,
  url text not null,
  status text not null default 'open' check (status in ('open', 'complete', 'expired')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index checkout_sessions_processor_key on checkout_sessions (processor_session_id);
create index checkout_sessions_member_idx on checkout_sessions (member_id, created_at);

-- The webhook inbox: one row per processor event id. A redelivery conflicts on the key and
-- changes nothing; the worker marks an event processed in the same transaction as its effect.
create table webhook_events (
  id text primary key,
  type text not null,
  account text,
  payload jsonb not null,
  received_at timestamptz not null default now(),
  processed_at timestamptz,
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text
);
create index webhook_events_pending_idx on webhook_events (next_attempt_at) where processed_at is null;

-- Orders processor reads: a mirror row only takes a state read after the one it holds.
create sequence processor_sync_seq;

alter table subscriptions add column processor_customer_id text;
alter table subscriptions add column trial_end timestamptz;
alter table subscriptions add column ended_at timestamptz;
-- The creator's internal note when canceling through the API; never shown to the member.
alter table subscriptions add column cancellation_reason text;
-- True when cancel_at_period_end was set by pausing the community, so resuming lifts only those.
alter table subscriptions add column canceled_by_pause boolean not null default false;
alter table subscriptions add column synced_seq bigint not null default 0;
create index subscriptions_creator_created_idx on subscriptions (creator_id, created_at, id);

create table refunds (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  subscription_id uuid not null references subscriptions (id),
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null,
  status text not null,
  processor_refund_id text not null,
  processor_charge_id text,
  created_at timestamptz not null
);
create unique index refunds_processor_key on refunds (processor_refund_id);
create index refunds_subscription_idx on refunds (creator_id, subscription_id, created_at);

-- Learned from account.updated; the processor account's payout schedule.
alter table creators add column payout_schedule text;
