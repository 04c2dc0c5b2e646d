-- Idempotency keys partitioned by the UTC day they were stored in (issue #32 item 3): the purge
-- drops a whole day once every key in it has expired instead of deleting its rows one by one
-- (at 2,500 keyed requests a second, 216M rows a day, each a heap and two index deletions and
-- a vacuum after), and nothing of a purge is left for autovacuum. Why a day and not the hour
-- the issue asked for: see tribes_key_partition_hours below (measured).
--
-- The primary key of a partitioned table must hold its partition column, so (scope, key) alone
-- is no longer unique, and a retry that crosses a partition boundary while its original is still
-- in flight would not meet the original's row in the index. Every writer of a key therefore first
-- takes the key's lock (tribes_keys_locked: a transaction-scoped advisory lock per key, in one
-- order) and then reads the key's newest row in a snapshot taken after the lock: the second of
-- two requests with one key waits until the first has committed or rolled back, then sees what
-- it stored, as it did on the unique index before. Inside one statement (the logging batch) the
-- function's own query still takes that fresh snapshot: it is VOLATILE, and in READ COMMITTED
-- each query of a volatile function takes its own.
--
-- Rows of a day with no partition of its own (the purge poller, which makes the next day's,
-- did not run, as in a test database migrated long ago) go to the default partition, which the
-- purge empties row by row as before; normally it stays empty. The poller creates and drops
-- partitions with a short lock_timeout (src/http/idempotency-store.ts): either takes an
-- exclusive lock on the table for a moment.
--
-- Keys are copied over for the last 30 days (the longest IDEMPOTENCY_TTL_HOURS allows); older
-- ones had expired under any TTL. A node of the build before cannot store keys in the new table
-- (its statements name the old unique key): during a rolling deploy its keyed POSTs answer 5xx
-- and store nothing, so the client's retry runs once on a new node.
alter table idempotency_keys rename to idempotency_keys_unpartitioned;
alter table idempotency_keys_unpartitioned rename constraint idempotency_keys_pkey to idempotency_keys_unpartitioned_pkey;

create table idempotency_keys (
  scope text not null,
  key text not null,
  request_hash text not null,
  state text not null check (state in ('in_progress', 'done', 'data')),
  status_code integer,
  content_type text,
  response_body text,
  created_at timestamptz not null default now(),
  locked_at timestamptz not null default now(),
  primary key (scope, key, created_at)
) partition by range (created_at);

create table idempotency_keys_default partition of idempotency_keys default;

-- Hours a partition spans (the keys' TTL is 24 h by default). Fixed for the table's life:
-- partitions of another width would overlap the ones made. Why a day and not an hour: a key
-- that is new (nearly every key) is looked for in every partition still live, ~TTL / width + 1
-- index probes. Measured with 8M keys over 23 h on the bench machine, 30 keys looked up at once:
-- one unpartitioned table 0.86-1.7 ms, partitions of 24 h 1.3 ms, of 6 h 3.1-3.3 ms, of 1 h
-- 15-35 ms; keyed logging lost 10-25 % with hourly partitions and nothing measurable with daily
-- ones. Dropping a day at a time keeps what the hour would: no row-by-row purge, no vacuum of it.
create function tribes_key_partition_hours() returns int language sql immutable as $$ select 24 $$;

-- The partition starting at `start` (UTC, a multiple of the width since the epoch), by name.
create function tribes_key_partition(start timestamptz) returns text language sql stable as $$
  select 'idempotency_keys_' || to_char(start at time zone 'UTC', 'YYYYMMDD"_"HH24')
$$;

-- Where the partition holding `at` starts.
create function tribes_key_partition_start(at timestamptz) returns timestamptz language sql immutable as $$
  select to_timestamp(floor(extract(epoch from at) / (tribes_key_partition_hours() * 3600)) * tribes_key_partition_hours() * 3600)
$$;

-- The starts of the current partition and of the `ahead` after it.
create function tribes_key_starts(ahead int) returns timestamptz[] language sql stable as $$
  select array(select tribes_key_partition_start(now()) + make_interval(hours => i * tribes_key_partition_hours())
               from generate_series(0, ahead) as i)
$$;

-- Creates the partitions starting at `starts` that do not exist yet; returns how many it made.
-- One whose rows already sit in the default partition keeps them there (creating it would fail
-- the default's constraint), and one whose lock is not granted in time is left for the next
-- run: neither is an error.
create function tribes_key_partitions_create(starts timestamptz[]) returns int language plpgsql as $$
declare
  start timestamptz;
  made int := 0;
begin
  foreach start in array starts loop
    if to_regclass(tribes_key_partition(start)) is null then
      begin
        execute format('create table %I partition of idempotency_keys for values from (%L) to (%L)',
                       tribes_key_partition(start), start, start + make_interval(hours => tribes_key_partition_hours()));
        made := made + 1;
      exception when check_violation or lock_not_available or duplicate_table then
        null;
      end;
    end if;
  end loop;
  return made;
end $$;

-- Drops the partitions that ended at least `ttl_hours` ago (every row in them has expired);
-- returns how many. One whose lock is not granted in time is left for the next run.
create function tribes_key_partitions_drop(ttl_hours int) returns int language plpgsql as $$
declare
  part text;
  dropped int := 0;
begin
  for part in
    select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'idempotency_keys'::regclass and c.relname ~ '^idempotency_keys_[0-9]{8}_[0-9]{2}$'
      and (substring(c.relname from 18 for 8) || ' ' || substring(c.relname from 27 for 2) || ':00 UTC')::timestamptz
          + make_interval(hours => tribes_key_partition_hours()) <= now() - make_interval(hours => ttl_hours)
    order by c.relname
  loop
    begin
      execute format('drop table if exists %I', part);
      dropped := dropped + 1;
    exception when lock_not_available then
      null;
    end;
  end loop;
  return dropped;
end $$;

-- Locks each key (scopes[i], keys[i]; null keys are skipped) until the transaction ends, in
-- one order so two writers of overlapping keys never deadlock, then answers the newest row of
-- each key stored within `ttl_hours`, read after the locks were granted (see the top).
create function tribes_keys_locked(scopes text[], keys text[], ttl_hours int)
returns table (scope text, key text, request_hash text, state text, status_code int, content_type text, response_body text)
-- rows 1: most calls find nothing (new keys); the default guess of 1,000 would skew the plan of
-- the statement calling it (the logging batch).
language plpgsql volatile rows 1 as $$
#variable_conflict use_column
begin
  -- Two-int advisory locks: a space of their own, apart from the one-bigint locks (migrations).
  perform pg_advisory_xact_lock(1768843621, l.h)
  from (select distinct hashtext(u.s || E'\n' || u.k) as h from unnest(scopes, keys) as u(s, k) where u.k is not null order by 1) as l;
  return query
    select distinct on (i.scope, i.key) i.scope, i.key, i.request_hash, i.state, i.status_code, i.content_type, i.response_body
    from idempotency_keys i
    where (i.scope, i.key) in (select u.s, u.k from unnest(scopes, keys) as u(s, k) where u.k is not null)
      and i.created_at >= now() - make_interval(hours => ttl_hours)
    order by i.scope, i.key, i.created_at desc;
end $$;

select tribes_key_partitions_create(array(
  select distinct tribes_key_partition_start(created_at) from idempotency_keys_unpartitioned where created_at >= now() - interval '30 days'
  union
  select unnest(tribes_key_starts(1))));

insert into idempotency_keys (scope, key, request_hash, state, status_code, content_type, response_body, created_at, locked_at)
select scope, key, request_hash, state, status_code, content_type, response_body, created_at, locked_at
from idempotency_keys_unpartitioned where created_at >= now() - interval '30 days';

drop table idempotency_keys_unpartitioned;
-- The logging statement no longer meets a key stored meanwhile (the key's lock waits for it).
drop function tribes_key_taken();
