-- Outgoing events (DESIGN §9, issue #30): the creator's webhook endpoints, the outbox of
-- events written in the transaction of the change they report, one delivery per event and
-- endpoint, and every attempt made (src/modules/events).

-- Time-ordered UUIDv7 made by the database, for rows a statement writes in numbers it alone
-- knows (a logging statement's PRs): gen_random_uuid()'s v4 with its first 48 bits replaced
-- by the clock in milliseconds and the version nibble set to 7.
create function tribes_uuid_v7() returns uuid language sql volatile as $$
  select encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6),
    52, 1), 53, 1), 'hex')::uuid
$$;

-- An endpoint signs with its secret, kept readable because signing needs it (like the
-- processor's webhook secret in DATA_DIR); while a rotation is 24 h old or less the previous
-- secret signs beside it. event_types null means every type. An endpoint is disabled by its
-- creator, by a 410 answer (`gone`), or after failing for 5 days (`failing`); failing_since
-- is the first failure since the last success.
create table webhook_endpoints (
  id uuid primary key,
  creator_id uuid not null references creators (id) on delete cascade,
  url text not null,
  description text,
  event_types text[],
  enabled boolean not null default true,
  disabled_reason text check (disabled_reason in ('creator', 'gone', 'failing')),
  secret text not null,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  failing_since timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- The outbox write probes this for every event: a creator's enabled endpoints.
create index webhook_endpoints_creator_idx on webhook_endpoints (creator_id, created_at desc, id desc);

-- The outbox. A row exists only where an enabled endpoint wanted its type when the change
-- committed (so a creator without endpoints pays one index probe per change). The id is the
-- `webhook-id` every delivery and retry of it carries.
create table events (
  id uuid primary key,
  creator_id uuid not null,
  type text not null,
  data jsonb not null,
  created_at timestamptz not null default now()
);
create index events_created_idx on events (created_at);

-- One per event and endpoint. `pending` deliveries are due at next_attempt_at (a sender's
-- claim pushes it ahead by a lease, so a crashed sender's claims come due again); a settled
-- one (`succeeded`, `dead`) has none. Attempts are counted at the claim.
create table webhook_deliveries (
  id uuid primary key,
  creator_id uuid not null,
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  event_id uuid not null references events (id) on delete cascade,
  event_type text not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'dead')),
  attempts int not null default 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_status_code int,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index webhook_deliveries_event_key on webhook_deliveries (event_id, endpoint_id);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
-- Dead ones: counted for the metrics, and re-queued by endpoint and time ("recover").
create index webhook_deliveries_dead_idx on webhook_deliveries (endpoint_id, created_at) where status = 'dead';

-- What each attempt saw: the answer's status (null: none came), how long it took and its
-- first KB, or the error that stopped it.
create table webhook_attempts (
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  n int not null,
  attempted_at timestamptz not null,
  status_code int,
  latency_ms int not null,
  response_body text,
  error text,
  primary key (delivery_id, n)
);
