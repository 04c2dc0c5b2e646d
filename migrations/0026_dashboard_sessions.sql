-- Signing in to the creator's dashboard (DESIGN §8): a one-time sign-in link, then a session
-- held in an HttpOnly cookie (src/modules/dashboard-sessions, src/http/auth.ts).
--
-- A link's token is random and stored only as its SHA-256 digest; it works once (used_at is
-- set by the conditional update that spends it) and for an hour. Rows are purged a day after
-- they expire, like onboarding-link tokens.
create table dashboard_login_links (
  id uuid primary key,
  creator_id uuid not null references creators (id) on delete cascade,
  token_hash bytea not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create unique index dashboard_login_links_hash_key on dashboard_login_links (token_hash);
create index dashboard_login_links_expires_idx on dashboard_login_links (expires_at);

-- A session's cookie token, also stored only as its digest. It lives 14 days at most
-- (expires_at, fixed at sign-in) and dies after 12 hours without use (last_seen_at, kept to
-- the minute like api_keys.last_used_at); revoking it ends it at once. The auth hook reads
-- one row by token_hash; the Settings screen lists a creator's unrevoked sessions newest first.
create table dashboard_sessions (
  id uuid primary key,
  creator_id uuid not null references creators (id) on delete cascade,
  token_hash bytea not null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  user_agent text
);
create unique index dashboard_sessions_hash_key on dashboard_sessions (token_hash);
create index dashboard_sessions_live_idx on dashboard_sessions (creator_id, created_at desc, id desc) where revoked_at is null;
create index dashboard_sessions_expires_idx on dashboard_sessions (expires_at);
