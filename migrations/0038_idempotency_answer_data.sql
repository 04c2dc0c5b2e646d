-- A keyed workout log stores its answer in the logging statement itself (issue #32 item 3):
-- no lookup before it, no transaction around it, no second statement after it. What that
-- statement can write is the answer's data as the route builds it (state 'data': the log's
-- id, created_at, the exercise names and places it found, the PRs it made), not the bytes the
-- route serializes later; the route rebuilds the same bytes from it for a retry with the same
-- body (src/http/idempotency.ts replay). A node of the build before sees a 'data' key as one
-- still in progress and answers 409 idempotency_key_in_use (Retry-After), never a wrong answer.
--
-- NOT VALID: every row already satisfies the wider rule, and validating would read the whole
-- table (a day of keys) under the migration.
alter table idempotency_keys drop constraint idempotency_keys_state_check;
alter table idempotency_keys add constraint idempotency_keys_state_check check (state in ('in_progress', 'done', 'data')) not valid;

-- Raised by the logging statement when a log it wrote has a key another request stored
-- meanwhile (a retry racing its original across nodes): the whole statement, the log with
-- it, rolls back, and the request is answered from that key (logging.repo.ts).
create function tribes_key_taken() returns text language plpgsql as $$
begin
  raise exception 'an Idempotency-Key of this logging batch was stored by another request first' using errcode = 'TK001';
end $$;
