-- One row per member who has logged: a counter that every change to the member's
-- training history bumps (a new log, a deleted log, a recomputation). Logging reads it
-- with the record holders in one statement and writes the log only if it is unchanged
-- (optimistic: no transaction held open across the PR computation, two round trips per
-- log). Changes that replay history bump it first, so its row lock serializes them and
-- any optimistic writer that read before them retries. Replaces the per-member advisory lock.
create table member_training (
  member_id uuid primary key references members (id),
  version bigint not null check (version > 0),
  updated_at timestamptz not null default now()
);
