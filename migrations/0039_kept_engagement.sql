-- The member list's 30-day engagement kept beside the member, not counted per member per read
-- (issue #32). workouts_completed_30d and posts_count_30d are exact over (now - 30 days, now]
-- to the instant; a page counted them with two index walks per member (and a post lookup per
-- comment): half of the page statement's time (0.35 of 0.63 ms for 50 members).
--
-- member_activity now keeps, per creator and member, the instants themselves:
--   logged     the performed_at of every log of the member in the creator's communities with
--              performed_at > logged_since, ascending (duplicates kept: two logs, two entries);
--   commented  the created_at of every comment of the member on a live (not deleted) post of
--              the creator with created_at > commented_since, ascending.
-- A read whose window starts at or after the `since` counts the array by two binary searches
-- (width_bucket; memberships/directory.sql.ts keptCount); an older window (a clock far back)
-- counts the source rows as before. Either way exact.
--
-- The arrays hold one to two months: a writer appends at the end, and about once a month
-- (or for an entry older than the newest) sorts and trims to the 31 days below the newest
-- entry (the `since` moves up to there), so they need no clock and no job.
-- Kept by statement-level triggers, so every writer (the logging statement, deletions, the
-- scale seeders) keeps them in its own transaction: an insert appends from the row itself (no
-- read of the source); a removal (a deleted log or comment, a deleted post, a moved log) locks
-- the members' rows first and then reads their entries again, so a concurrent append is never
-- lost (each statement of the trigger function takes a fresh snapshot after the lock).
alter table member_activity
  add column logged_since timestamptz not null default '-infinity',
  add column logged timestamptz[] not null default '{}',
  add column commented_since timestamptz not null default '-infinity',
  add column commented timestamptz[] not null default '{}';

-- The rows change on every log now: room on each page for a HOT update (from the next pages
-- written; the backfill below rewrites every row that has entries).
alter table member_activity set (fillfactor = 85);

-- An append that keeps the array as it is (the usual log or comment: newer than every entry
-- kept, and the oldest entry not yet two months below the newest): `added` (ascending) goes at
-- the end, nothing is sorted or trimmed. Inlined into the triggers' updates (a plain expression).
create function kept_appends(kept timestamptz[], since timestamptz, lo timestamptz, hi timestamptz) returns boolean
language sql immutable parallel safe
as $$
  select lo > since and (cardinality(kept) = 0 or (lo >= kept[cardinality(kept)] and kept[1] > hi - interval '62 days'))
$$;

-- Otherwise (an old log logged late, or time to trim): the entries sorted again and trimmed to
-- the 31 days below the newest, the `since` moved up to there (never down: an entry at or
-- below the old `since` is not kept, the array never promised it). So an array holds one to
-- two months of entries and is trimmed about once a month.
create function kept_merge(kept timestamptz[], since timestamptz, added timestamptz[], out since_ timestamptz, out kept_ timestamptz[])
language sql immutable parallel safe
as $$
  with s as (select greatest(since, greatest(kept[cardinality(kept)], (select max(t) from unnest(added) t)) - interval '31 days') as s)
  select s.s, array(select t from unnest(kept || added) t where t > s.s order by t) from s
$$;

-- Logs.
create function member_logged_kept() returns trigger
language plpgsql
as $$
begin
  -- The SET expressions read `a`'s columns only (and the statement's rows): after waiting for a
  -- concurrent writer's row lock they are worked out again on its version, so no append is lost.
  update member_activity a
  set logged_since = case when kept_appends(a.logged, a.logged_since, n.lo, n.hi) then a.logged_since else (kept_merge(a.logged, a.logged_since, n.added)).since_ end,
      logged = case when kept_appends(a.logged, a.logged_since, n.lo, n.hi) then a.logged || n.added else (kept_merge(a.logged, a.logged_since, n.added)).kept_ end
  from (select creator_id, member_id, array_agg(performed_at order by performed_at) as added, min(performed_at) as lo, max(performed_at) as hi
        from new_logs where creator_id is not null group by creator_id, member_id order by creator_id, member_id) n
  where a.creator_id = n.creator_id and a.member_id = n.member_id;
  return null;
end $$;

-- The rows of `creators` × `members` locked, in one order: a removal then reads the members'
-- entries again with a snapshot taken after any concurrent append committed.
-- (PL/pgSQL: PERFORM reads every row, so every row is locked.)
create function member_activity_locked(creators uuid[], members uuid[]) returns void
language plpgsql
as $$
begin
  perform 1 from member_activity a join unnest(creators, members) as m(creator_id, member_id)
    on a.creator_id = m.creator_id and a.member_id = m.member_id
    order by a.creator_id, a.member_id for update of a;
end $$;

-- The members of `creators` × `members` read their logs again (after the row locks).
create function member_logs_again(creators uuid[], members uuid[]) returns void
language plpgsql
as $$
begin
  if creators is null then return; end if;
  perform member_activity_locked(creators, members);
  update member_activity a set logged = array(
      select l.performed_at from workout_logs l
      where l.creator_id = a.creator_id and l.member_id = a.member_id and l.performed_at > a.logged_since order by 1)
  from unnest(creators, members) as m(creator_id, member_id)
  where a.creator_id = m.creator_id and a.member_id = m.member_id;
end $$;

create function member_logged_removed() returns trigger
language plpgsql
as $$
begin
  perform member_logs_again(array_agg(x.creator_id order by x.creator_id, x.member_id), array_agg(x.member_id order by x.creator_id, x.member_id))
  from (select distinct o.creator_id, o.member_id from old_logs o
        join member_activity a on a.creator_id = o.creator_id and a.member_id = o.member_id
        where o.performed_at > a.logged_since) x;
  return null;
end $$;

create trigger member_logged_insert after insert on workout_logs referencing new table as new_logs
  for each statement execute function member_logged_kept();
create trigger member_logged_delete after delete on workout_logs referencing old table as old_logs
  for each statement execute function member_logged_removed();
-- A moved log is a removal and an insertion (no route moves one today; the triggers keep it true).
create trigger member_logged_update_old after update on workout_logs referencing old table as old_logs
  for each statement execute function member_logged_removed();
create trigger member_logged_update_new after update on workout_logs referencing new table as new_logs
  for each statement execute function member_logged_kept();

-- Comments. A comment is written on a live post (the comment's transaction holds the post's
-- count row, which a deletion takes too: engagement.repo.ts lockCounts).
create function member_commented_kept() returns trigger
language plpgsql
as $$
begin
  update member_activity a
  set commented_since = case when kept_appends(a.commented, a.commented_since, n.lo, n.hi) then a.commented_since else (kept_merge(a.commented, a.commented_since, n.added)).since_ end,
      commented = case when kept_appends(a.commented, a.commented_since, n.lo, n.hi) then a.commented || n.added else (kept_merge(a.commented, a.commented_since, n.added)).kept_ end
  from (select creator_id, member_id, array_agg(created_at order by created_at) as added, min(created_at) as lo, max(created_at) as hi
        from new_comments group by creator_id, member_id order by creator_id, member_id) n
  where a.creator_id = n.creator_id and a.member_id = n.member_id;
  return null;
end $$;

-- The members of `creators` × `members` read their live comments again (after the row locks).
create function member_comments_again(creators uuid[], members uuid[]) returns void
language plpgsql
as $$
begin
  if creators is null then return; end if;
  perform member_activity_locked(creators, members);
  update member_activity a set commented = array(
      select pc.created_at from post_comments pc join posts p on p.id = pc.post_id and p.deleted_at is null
      where pc.creator_id = a.creator_id and pc.member_id = a.member_id and pc.created_at > a.commented_since order by 1)
  from unnest(creators, members) as m(creator_id, member_id)
  where a.creator_id = m.creator_id and a.member_id = m.member_id;
end $$;

create function member_comment_removed() returns trigger
language plpgsql
as $$
begin
  perform member_comments_again(array_agg(x.creator_id order by x.creator_id, x.member_id), array_agg(x.member_id order by x.creator_id, x.member_id))
  from (select distinct o.creator_id, o.member_id from old_comments o
        join member_activity a on a.creator_id = o.creator_id and a.member_id = o.member_id
        where o.created_at > a.commented_since) x;
  return null;
end $$;

-- A post deleted: its comments stop counting for every member who wrote one.
create function member_post_deleted() returns trigger
language plpgsql
as $$
begin
  perform member_comments_again(array_agg(x.creator_id order by x.creator_id, x.member_id), array_agg(x.member_id order by x.creator_id, x.member_id))
  from (select distinct pc.creator_id, pc.member_id from new_posts n
        join old_posts o on o.id = n.id and o.deleted_at is null and n.deleted_at is not null
        join post_comments pc on pc.post_id = n.id) x;
  return null;
end $$;

create trigger member_commented_insert after insert on post_comments referencing new table as new_comments
  for each statement execute function member_commented_kept();
create trigger member_commented_delete after delete on post_comments referencing old table as old_comments
  for each statement execute function member_comment_removed();
create trigger member_commented_post_deleted after update on posts referencing old table as old_posts new table as new_posts
  for each statement execute function member_post_deleted();

-- What was written before this migration: each member's entries of the 31 days below their newest.
with k as (
  select creator_id, member_id, max(performed_at) - interval '31 days' as since
  from workout_logs where creator_id is not null group by creator_id, member_id
)
update member_activity a set logged_since = k.since, logged = array(
    select l.performed_at from workout_logs l
    where l.creator_id = k.creator_id and l.member_id = k.member_id and l.performed_at > k.since order by 1)
from k where a.creator_id = k.creator_id and a.member_id = k.member_id;

with k as (
  select pc.creator_id, pc.member_id, max(pc.created_at) - interval '31 days' as since
  from post_comments pc join posts p on p.id = pc.post_id and p.deleted_at is null
  group by pc.creator_id, pc.member_id
)
update member_activity a set commented_since = k.since, commented = array(
    select pc.created_at from post_comments pc join posts p on p.id = pc.post_id and p.deleted_at is null
    where pc.creator_id = k.creator_id and pc.member_id = k.member_id and pc.created_at > k.since order by 1)
from k where a.creator_id = k.creator_id and a.member_id = k.member_id;
