-- The member list's streak kept, not read (issue #32). streak_days (DESIGN §7: consecutive UTC
-- days with a workout, ending today or yesterday) was computed at every read of a directory
-- row from all of the member's logged days: a member with four years of daily logs cost 1.3 ms
-- of PostgreSQL alone, so a page of 50 such members cost tens of milliseconds.
--
-- member_activity now keeps the member's latest run of logged days in the creator's
-- communities: streak_to is the latest UTC day with a log, streak_from the first day of the
-- run of consecutive days ending there (both null: no log). A read answers
-- streak_to - streak_from + 1 when streak_to is today or yesterday, else 0.
--
-- Kept by statement-level triggers on workout_logs, so every writer (the logging statement, a
-- deletion, the scale seeders) keeps it in its own transaction. A new log usually costs
-- nothing or one narrow update: a day inside the run changes nothing, the day after it extends
-- it, a later day starts a new run, a day before the run's eve changes nothing. Only what can
-- join or split runs (a log on the run's eve, a deletion inside the run, a moved log) reads the
-- member's days again (member_streaks).
alter table member_activity add column streak_from date, add column streak_to date;

-- The latest run of consecutive logged days of each (creator, member) given, set-based (one
-- member after a deletion, a million in a seeder's statement): among a member's distinct days
-- newest first, the k-th belongs to the run while it is exactly k days before the newest. A
-- member with no log in the creator's communities has no row.
create function member_streaks(creators uuid[], members uuid[])
returns table (creator_id uuid, member_id uuid, streak_from date, streak_to date)
language sql stable
as $$
  select r.creator_id, r.member_id, min(r.day), max(r.top) from (
    select x.creator_id, x.member_id, x.day, max(x.day) over w as top, (row_number() over (w order by x.day desc))::int - 1 as k
    from (select distinct l.creator_id, l.member_id, (l.performed_at at time zone 'UTC')::date as day
          from unnest(creators, members) as m(creator_id, member_id)
          join workout_logs l on l.creator_id = m.creator_id and l.member_id = m.member_id) x
    window w as (partition by x.creator_id, x.member_id)
  ) r where r.day + r.k = r.top
  group by r.creator_id, r.member_id
$$;

create function member_streak_logged() returns trigger
language plpgsql
as $$
declare
  again_creators uuid[];
  again_members uuid[];
begin
  with d as (
    -- One row per member of the statement's logs: their new days' range.
    select creator_id, member_id, min(day) as lo, max(day) as hi
    from (select creator_id, member_id, (performed_at at time zone 'UTC')::date as day from new_logs where creator_id is not null) x
    group by creator_id, member_id
  ),
  moved as (
    select a.creator_id, a.member_id,
           -- A single new day past the run's next day (or the first ever): a run of its own.
           -- The run's next day: the run goes on. Anything else may join runs: read again.
           case when d.lo = d.hi and (a.streak_to is null or d.lo > a.streak_to + 1) then d.lo
                when d.lo = d.hi and d.lo = a.streak_to + 1 then a.streak_from end as streak_from,
           d.hi as streak_to
    from d join member_activity a on a.creator_id = d.creator_id and a.member_id = d.member_id
    -- Nothing changes for days inside the run (a member's second log of a day, the usual case)
    -- or only before the run's eve (an old workout logged late).
    where (a.streak_to is null or d.lo < a.streak_from or d.hi > a.streak_to)
      and not coalesce(d.hi < a.streak_from - 1, false)
  ),
  simple as (
    update member_activity a set streak_from = n.streak_from, streak_to = n.streak_to
    from (select * from moved where streak_from is not null order by creator_id, member_id) n
    where a.creator_id = n.creator_id and a.member_id = n.member_id
  )
  select array_agg(creator_id order by creator_id, member_id), array_agg(member_id order by creator_id, member_id)
  into again_creators, again_members
  from moved where streak_from is null;
  -- Only when some member's days must be read again: a statement over the logs planned for
  -- no member at all would cost every log more than the update itself.
  if again_creators is not null then
    update member_activity a set streak_from = s.streak_from, streak_to = s.streak_to
    from member_streaks(again_creators, again_members) s
    where a.creator_id = s.creator_id and a.member_id = s.member_id;
  end if;
  return null;
end $$;

-- A deletion or a moved log may split the run or end it earlier: the members whose removed
-- day was inside their run read their days again.
create function member_streak_removed() returns trigger
language plpgsql
as $$
begin
  with m as (
    select distinct o.creator_id, o.member_id from old_logs o
    join member_activity x on x.creator_id = o.creator_id and x.member_id = o.member_id
    where (o.performed_at at time zone 'UTC')::date between x.streak_from and x.streak_to
  )
  update member_activity a set streak_from = s.streak_from, streak_to = s.streak_to
  from (select m.creator_id, m.member_id, s.streak_from, s.streak_to
        from m left join member_streaks(array(select creator_id from m order by creator_id, member_id),
                                        array(select member_id from m order by creator_id, member_id)) s
          on s.creator_id = m.creator_id and s.member_id = m.member_id
        order by 1, 2) s
  where a.creator_id = s.creator_id and a.member_id = s.member_id;
  return null;
end $$;

create trigger member_streak_insert after insert on workout_logs referencing new table as new_logs
  for each statement execute function member_streak_logged();
create trigger member_streak_delete after delete on workout_logs referencing old table as old_logs
  for each statement execute function member_streak_removed();
-- An update that moves a log (its day, member or creator) is a removal and an insertion.
create trigger member_streak_update_old after update on workout_logs referencing old table as old_logs
  for each statement execute function member_streak_removed();
create trigger member_streak_update_new after update on workout_logs referencing new table as new_logs
  for each statement execute function member_streak_logged();

-- The members who logged before this migration.
with m as (select distinct creator_id, member_id from workout_logs where creator_id is not null)
update member_activity a set streak_from = s.streak_from, streak_to = s.streak_to
from member_streaks(array(select creator_id from m order by creator_id, member_id), array(select member_id from m order by creator_id, member_id)) s
where a.creator_id = s.creator_id and a.member_id = s.member_id;
