-- The subscription mirror's core tables, shaped by the spec's Tier, Member and
-- Subscription resources. Later migrations extend them as the processor, checkout and
-- member accounts arrive; community figures (members_count, active_subscribers, mrr_cents)
-- are real queries over these tables from the start.

-- Monthly-normalised price of one subscription, rounded half up to whole cents
-- (DESIGN §7: quarterly / 3, yearly / 12, rounded per subscription before summing).
create function monthly_cents(price_cents bigint, billing_period text) returns bigint
language sql immutable strict parallel safe
as $$
  select case billing_period
    when 'monthly' then price_cents
    when 'quarterly' then (2 * price_cents + 3) / 6
    when 'yearly' then (2 * price_cents + 12) / 24
  end
$$;

create table tiers (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  community_id uuid not null references communities (id),
  name text not null,
  price_cents bigint not null check (price_cents >= 0),
  billing_period text not null check (billing_period in ('monthly', 'quarterly', 'yearly')),
  trial_days integer not null default 0 check (trial_days >= 0),
  benefits jsonb not null default '[]',
  is_active boolean not null default true,
  level integer,
  processor_product_id text,
  processor_price_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index tiers_creator_community_idx on tiers (creator_id, community_id, created_at, id);

-- A member is one person across creators; what a creator sees of them is always reached
-- through that creator's subscriptions.
create table members (
  id uuid primary key,
  name text not null,
  email text not null,
  avatar_url text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index members_email_key on members (lower(email));

create table subscriptions (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  community_id uuid not null references communities (id),
  tier_id uuid not null references tiers (id),
  member_id uuid not null references members (id),
  status text not null check (status in ('trialing', 'active', 'past_due', 'canceled')),
  -- The price this subscription is billed at (a tier's price may have changed since).
  price_cents bigint not null check (price_cents >= 0),
  billing_period text not null check (billing_period in ('monthly', 'quarterly', 'yearly')),
  current_period_start timestamptz,
  current_period_end timestamptz,
  cancel_at_period_end boolean not null default false,
  canceled_at timestamptz,
  processor_subscription_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index subscriptions_processor_key on subscriptions (processor_subscription_id);
create index subscriptions_community_status_idx on subscriptions (creator_id, community_id, status) include (member_id, price_cents, billing_period);
create index subscriptions_tier_status_idx on subscriptions (creator_id, tier_id, status);
create index subscriptions_member_idx on subscriptions (creator_id, member_id, created_at);
