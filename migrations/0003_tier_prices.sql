-- Tiers at the processor. A tier's price can change; each change is a new processor price
-- (Stripe prices are immutable), and subscribers keep the price they signed up at, so every
-- price a tier ever had is kept here: webhooks name a price, and this maps it to its tier.

alter table tiers add column currency text not null default 'brl' check (currency ~ '^[a-z]{3}$');

create table tier_prices (
  processor_price_id text primary key,
  creator_id uuid not null references creators (id),
  tier_id uuid not null references tiers (id),
  price_cents bigint not null check (price_cents >= 0),
  billing_period text not null check (billing_period in ('monthly', 'quarterly', 'yearly')),
  currency text not null,
  created_at timestamptz not null default now()
);
create index tier_prices_tier_idx on tier_prices (creator_id, tier_id, created_at);
