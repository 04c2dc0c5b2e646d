-- Every Stripe object the simulator owns, stored as the JSON the API returns (data) plus
-- simulator-only state that must never leak into responses (internal). `account` is ''
-- for the platform and the acct_ id for objects living on a connected account; `seq`
-- gives lists a stable newest-first order even when many objects share one `created` second.
CREATE TABLE objects (
  id text PRIMARY KEY,
  seq bigserial NOT NULL,
  type text NOT NULL,
  account text NOT NULL DEFAULT '',
  created bigint NOT NULL,
  data jsonb NOT NULL,
  internal jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX objects_type_account_seq ON objects (type, account, seq DESC);

-- One row: the simulator clock is wall clock + offset_seconds, so it keeps ticking between
-- advances and survives restarts.
CREATE TABLE clock (
  id integer PRIMARY KEY CHECK (id = 1),
  offset_seconds bigint NOT NULL
);
INSERT INTO clock (id, offset_seconds) VALUES (1, 0);

-- Future work on the simulator clock (trial ends, renewals, retries, payout transitions,
-- automatic payouts), run strictly in (due_at, id) order by the clock.
CREATE TABLE jobs (
  id bigserial PRIMARY KEY,
  due_at bigint NOT NULL,
  kind text NOT NULL,
  ref text NOT NULL,
  account text NOT NULL DEFAULT '',
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL DEFAULT 'pending'
);
CREATE INDEX jobs_pending_due ON jobs (due_at, id) WHERE status = 'pending';
CREATE INDEX jobs_ref ON jobs (ref) WHERE status = 'pending';

CREATE TABLE events (
  id text PRIMARY KEY,
  seq bigserial NOT NULL,
  type text NOT NULL,
  account text NOT NULL DEFAULT '',
  created bigint NOT NULL,
  data jsonb NOT NULL
);
CREATE INDEX events_account_seq ON events (account, seq DESC);

-- One row per (event, endpoint). next_attempt_at and claimed_until are real (wall) time in
-- milliseconds: retries follow real time, not the simulator clock.
CREATE TABLE deliveries (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL,
  endpoint_id text NOT NULL,
  url text NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  claimed_until bigint,
  last_status integer,
  last_error text
);
CREATE INDEX deliveries_pending ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_event ON deliveries (event_id);

-- Idempotency-Key replay store, scoped like Stripe's: per account (or platform) and key.
CREATE TABLE idempotency (
  scope text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status integer NOT NULL,
  body jsonb NOT NULL,
  created bigint NOT NULL,
  PRIMARY KEY (scope, key)
);
