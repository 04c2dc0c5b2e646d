-- Creators manage their own API keys (issue #27, DESIGN §8): a name to tell keys apart, a
-- scope, and when the key was last used.
--
-- scope: `full` may do everything; `read` only GET (and HEAD) requests, refused with 403
-- `insufficient_scope` on every write (src/http/auth.ts requiredScope). Every key issued
-- before this migration could write, so existing rows take the default, `full`.
alter table api_keys add column name text;
alter table api_keys add column scope text not null default 'full';
alter table api_keys add constraint api_keys_scope_check check (scope in ('full', 'read'));

-- Kept to the minute, not per request: the auth hook writes it only when the stored time is
-- null or over 60 seconds old (a conditional update, so several nodes racing write it once).
alter table api_keys add column last_used_at timestamptz;
