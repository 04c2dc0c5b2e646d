-- Payouts mirrored from the processor (events + reconciliation), and the full payout
-- schedule of each creator's account (interval plus its weekly/monthly anchor).

create table payouts (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  processor_payout_id text not null,
  amount_cents bigint not null,
  currency text not null,
  status text not null check (status in ('pending', 'in_transit', 'paid', 'failed', 'canceled')),
  method text not null check (method in ('automatic', 'manual')),
  arrival_date timestamptz,
  failure_code text,
  failure_reason text,
  created_at timestamptz not null,
  updated_at timestamptz not null default now(),
  synced_seq bigint not null default 0
);
create unique index payouts_processor_key on payouts (processor_payout_id);
create index payouts_creator_created_idx on payouts (creator_id, created_at, id);
create index payouts_creator_status_idx on payouts (creator_id, status, created_at);

alter table creators add column payout_schedule_anchor jsonb;

-- A member's own subscriptions across creators (the member app's list).
create index subscriptions_member_created_idx on subscriptions (member_id, created_at, id);
