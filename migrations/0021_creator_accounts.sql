-- The creator's connected account as Tribes knows it (issue #27, DESIGN §8): whether it can
-- take charges and pay out, whether onboarding was submitted, and what the processor still
-- requires. Written only from what the processor says (account.updated, re-read; the account
-- as created; reconciliation), newest read wins by the mirror's sequence like every mirrored
-- object. Null everywhere for creators made before this migration: the service reads their
-- account from the processor at first need (a checkout, GET /account) and reconciliation
-- fills the rest; until then nothing is refused on their account's behalf.
alter table creators
  add column charges_enabled boolean,
  add column payouts_enabled boolean,
  add column details_submitted boolean,
  add column account_requirements jsonb,
  add column account_synced_seq bigint,
  add column account_synced_at timestamptz;

-- The refresh and return URLs of an onboarding link carry one of these: random, stored only
-- as a SHA-256 digest, bound to its creator, short-lived, and the refresh spends it (single
-- use). Rows are purged a day after they expire.
create table account_link_tokens (
  id uuid primary key,
  creator_id uuid not null references creators (id) on delete cascade,
  token_hash bytea not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create unique index account_link_tokens_hash_key on account_link_tokens (token_hash);
create index account_link_tokens_expires_idx on account_link_tokens (expires_at);
