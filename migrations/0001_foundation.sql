-- Foundation: creators and their API keys, Idempotency-Key storage, communities.
-- Every tenant table carries creator_id and leads its indexes with it, so a creator's
-- rows stay together (and the schema can be distributed by tenant, e.g. Citus).

create table creators (
  id uuid primary key,
  name text not null,
  email text not null,
  processor_account_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- E-mail is unique regardless of case: "Ana@x.com" and "ana@x.com" are one person.
create unique index creators_email_key on creators (lower(email));
create unique index creators_processor_account_key on creators (processor_account_id);

create table api_keys (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  -- SHA-256 of the whole key: the key itself is never stored.
  key_hash bytea not null,
  -- First characters of the key, kept so a person can tell keys apart.
  prefix text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create unique index api_keys_hash_key on api_keys (key_hash);
create index api_keys_creator_idx on api_keys (creator_id, created_at);

-- Responses remembered per Idempotency-Key. scope names the caller (creator, member or
-- admin), so two callers can never see each other's responses.
create table idempotency_keys (
  scope text not null,
  key text not null,
  request_hash text not null,
  state text not null check (state in ('in_progress', 'done')),
  status_code integer,
  content_type text,
  response_body text,
  created_at timestamptz not null default now(),
  locked_at timestamptz not null default now(),
  primary key (scope, key)
);
create index idempotency_keys_created_idx on idempotency_keys (created_at);

create table communities (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  name text not null,
  slug text not null,
  description text,
  category text not null check (category in ('musculacao', 'funcional', 'yoga', 'crossfit', 'corrida', 'nutricao', 'outros')),
  is_public boolean not null default true,
  cover_image_url text,
  status text not null default 'active' check (status in ('active', 'paused')),
  paused_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint communities_slug_format check (slug ~ '^[a-z0-9-]{3,63}$')
);
-- Slugs are global URL keys, unique across all creators.
create unique index communities_slug_key on communities (slug);
create index communities_creator_created_idx on communities (creator_id, created_at, id);
-- Discovery lists active public communities of every creator.
create index communities_discoverable_idx on communities (created_at, id) where status = 'active' and is_public;
