-- Paid invoices of mirrored subscriptions, so a refund made anywhere (this API, the
-- processor dashboard) can be traced from its payment back to the subscription and kept in
-- the refunds mirror by events and reconciliation.
create table payments (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  subscription_id uuid not null references subscriptions (id),
  processor_invoice_id text not null,
  processor_payment_intent_id text not null,
  amount_cents bigint not null,
  currency text not null,
  paid_at timestamptz not null
);
create unique index payments_invoice_key on payments (processor_invoice_id);
create index payments_intent_idx on payments (processor_payment_intent_id);
create index payments_subscription_idx on payments (creator_id, subscription_id, paid_at);
