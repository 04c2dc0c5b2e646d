-- Idempotency keys partitioned by the hour they were stored in (issue #32 item 3): the purge
-- drops a whole hour once it has expired instead of deleting its rows one by one (at 2,500 keyed
-- requests a second, 9M rows an hour, each a heap and two index deletions and a vacuum after),
-- and a new key goes into the current hour's small index, not into one holding the whole day.
--
-- The primary key of a partitioned table must hold its partition column, so (scope, key) alone
-- is no longer unique, and a retry that crosses an hour boundary while its original is still in
-- flight would not meet the original's row in the index. Every writer of a key therefore first
-- takes the key's lock (tribes_keys_locked: a transaction-scoped advisory lock per key, in one
-- order) and then reads the key's newest row in a snapshot taken after the lock: the second of
-- two requests with one key waits until the first has committed or rolled back, then sees what
-- it stored, as it did on the unique index before. Inside one statement (the logging batch) the
-- function's own query still takes that fresh snapshot: it is VOLATILE, and in READ COMMITTED
-- each query of a volatile function takes its own.
--
-- Rows of an hour with no partition of its own (the maintenance below did not run, as in a
-- test database migrated long ago) go to the default partition, which the purge empties row by
-- row as before; normally it stays empty. The hours ahead are created by the purge poller
-- (src/http/idempotency-store.ts) with a short lock_timeout: creating or dropping a partition
-- takes an exclusive lock on the table for a moment.
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

-- The partition of the UTC hour starting at `hour`, by name.
create function tribes_key_partition(hour timestamptz) returns text language sql stable as $$
  select 'idempotency_keys_' || to_char(hour at time zone 'UTC', 'YYYYMMDD"_"HH24')
$$;

-- Creates the partitions of `hours` (UTC hour starts) that do not exist yet; returns how many it
-- made. An hour whose rows already sit in the default partition keeps them there (creating it
-- would fail the default's constraint), and an hour whose lock is not granted in time is left
-- for the next run: neither is an error.
create function tribes_key_partitions_create(hours timestamptz[]) returns int language plpgsql as $$
declare
  hour timestamptz;
  made int := 0;
begin
  foreach hour in array hours loop
    if to_regclass(tribes_key_partition(hour)) is null then
      begin
        execute format('create table %I partition of idempotency_keys for values from (%L) to (%L)',
                       tribes_key_partition(hour), hour, hour + interval '1 hour');
        made := made + 1;
      exception when check_violation or lock_not_available or duplicate_table then
        null;
      end;
    end if;
  end loop;
  return made;
end $$;

-- The current UTC hour and the `ahead` after it.
create function tribes_key_hours(ahead int) returns timestamptz[] language sql stable as $$
  select array(select (date_trunc('hour', now() at time zone 'UTC') at time zone 'UTC') + make_interval(hours => i)
               from generate_series(0, ahead) as i)
$$;

-- Drops the hour partitions that ended at least `ttl_hours` ago (every row in them has
-- expired); returns how many. One whose lock is not granted in time is left for the next run.
create function tribes_key_partitions_drop(ttl_hours int) returns int language plpgsql as $$
declare
  part text;
  dropped int := 0;
begin
  for part in
    select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'idempotency_keys'::regclass and c.relname ~ '^idempotency_keys_[0-9]{8}_[0-9]{2}$'
      and (substring(c.relname from 18 for 8) || ' ' || substring(c.relname from 27 for 2) || ':00 UTC')::timestamptz + interval '1 hour'
          <= now() - make_interval(hours => ttl_hours)
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
language plpgsql volatile as $$
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
  select distinct date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC' from idempotency_keys_unpartitioned
  where created_at >= now() - interval '30 days'
  union
  select unnest(tribes_key_hours(2))));

insert into idempotency_keys (scope, key, request_hash, state, status_code, content_type, response_body, created_at, locked_at)
select scope, key, request_hash, state, status_code, content_type, response_body, created_at, locked_at
from idempotency_keys_unpartitioned where created_at >= now() - interval '30 days';

drop table idempotency_keys_unpartitioned;
-- The logging statement no longer meets a key stored meanwhile (the key's lock waits for it).
drop function tribes_key_taken();
