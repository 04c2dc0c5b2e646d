-- Bounded background work (issue #11): an event that failed WEBHOOK_MAX_ATTEMPTS times is
-- parked (dead_at) with its last error instead of retrying forever; operators list and retry
-- it. Processed events are purged after WEBHOOK_RETENTION_DAYS (their payloads hold personal
-- data) and expired member tokens daily, both in bounded batches, oldest first.
alter table webhook_events add column dead_at timestamptz;
drop index webhook_events_pending_idx;
create index webhook_events_pending_idx on webhook_events (next_attempt_at) where processed_at is null and dead_at is null;
create index webhook_events_dead_idx on webhook_events (dead_at) where dead_at is not null;
create index webhook_events_processed_idx on webhook_events (processed_at) where processed_at is not null;
create index member_tokens_expires_idx on member_tokens (expires_at);
