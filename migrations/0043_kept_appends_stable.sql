-- kept_appends and kept_merge (0039) declared STABLE, as their bodies are: a timestamptz minus an
-- interval of days depends on the session's time zone. Declared IMMUTABLE, kept_appends could
-- not be inlined (PostgreSQL inlines a SQL function only when its body is no more volatile than
-- the function says it is), so the triggers that keep a member's logging and commenting instants
-- ran it as a function call: its body parsed and planned again at every firing, once for each of
-- the two columns it decides, on every log and every comment (`perf` under keyed logging: ~4 %
-- of PostgreSQL's samples in `fmgr_sql`, parsing among them). Inlined, it is the plain expression
-- 0039 meant it to be. kept_merge cannot be inlined (it returns a record); its label is only
-- made true. Nothing else changes: the same answers, and no index or constraint uses either.
alter function kept_appends(timestamptz[], timestamptz, timestamptz, timestamptz) stable;
alter function kept_merge(timestamptz[], timestamptz, timestamptz[]) stable;
