-- The creator's balance transactions, copied from the processor as they appear (they never
-- change once created, except pending → available, which is not kept here), so all-time and
-- monthly earnings are read locally instead of listing the account's whole history on every
-- balance request. available/pending still come from the processor's balance.
create table balance_transactions (
  -- The processor's id (txn_...): a transaction copied twice is stored once.
  id text primary key,
  creator_id uuid not null references creators (id),
  type text not null,
  amount_cents bigint not null,
  fee_cents bigint not null,
  net_cents bigint not null,
  currency text not null,
  source text,
  created_at timestamptz not null,
  copied_at timestamptz not null default now()
);
create index balance_transactions_creator_created_idx on balance_transactions (creator_id, created_at, id);

-- Creator net of charges and refunds per UTC calendar month, added to in the statement that
-- copies new transactions: all-time = the sum of a creator's months (a few rows per year).
create table creator_monthly_net (
  creator_id uuid not null references creators (id),
  currency text not null,
  month date not null,
  net_cents bigint not null,
  primary key (creator_id, currency, month)
);

-- The newest balance transaction copied; null until the first full copy completes. The
-- next copy asks the processor only for transactions newer than it.
alter table creators add column balance_txn_cursor text;
