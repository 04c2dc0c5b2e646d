-- Activity out of the directory row (issue #32). creator_members.last_active_at changed on
-- every member's first activity of the hour (a log, a comment, kudos, a vote, a view), and it
-- was in three of the row's indexes, so each such update wrote a new version of the wide row
-- and a new entry in every index, the name and trigram search indexes included. It moves to
-- a narrow table of its own: an activity update now writes a small row and two index entries
-- (its key and the order by activity), and the directory row changes only when a subscription
-- does.
--
-- One row per directory row, made by a trigger on creator_members (any writer: the mirror's
-- refresh, rebuilds, the scale seeders), so the list's order by activity is one index walk.
create table member_activity (
  creator_id uuid not null,
  member_id uuid not null,
  -- Last activity in the creator's communities (DESIGN §7), at most once an hour
  -- (activity/activity.ts); null: none yet.
  last_active_at timestamptz,
  -- creator_members.state = 'churned', copied (it changes with subscriptions, rarely): the
  -- metrics' count of live members active in a span is then one index range, no join.
  churned boolean not null default false,
  primary key (creator_id, member_id)
);

insert into member_activity (creator_id, member_id, last_active_at, churned)
select creator_id, member_id, last_active_at, state = 'churned' from creator_members;

-- The list's order by last activity (members never active last when descending), the metrics
-- fold's "active since" range and the summary's live members active in a span.
create index member_activity_recent_idx on member_activity (creator_id, last_active_at desc nulls last, member_id desc) include (churned);

create function member_activity_rows() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'INSERT' then
    insert into member_activity (creator_id, member_id, churned)
    select creator_id, member_id, state = 'churned' from new_rows order by 1, 2
    on conflict (creator_id, member_id) do nothing;
  else
    update member_activity a set churned = n.state = 'churned'
    from new_rows n join old_rows o on o.creator_id = n.creator_id and o.member_id = n.member_id
    where a.creator_id = n.creator_id and a.member_id = n.member_id and (n.state = 'churned') <> (o.state = 'churned');
  end if;
  return null;
end $$;
create trigger member_activity_rows after insert on creator_members referencing new table as new_rows
  for each statement execute function member_activity_rows();
create trigger member_activity_churned after update on creator_members referencing old table as old_rows new table as new_rows
  for each statement execute function member_activity_rows();

-- The directory's indexes without the moved column (they carried it so status filters were
-- index-only; those filters now look activity up per candidate row).
drop index creator_members_active_idx;
drop index creator_members_joined_idx;
drop index creator_members_state_idx;
alter table creator_members drop column last_active_at;
create index creator_members_joined_idx on creator_members (creator_id, joined_at desc, member_id desc) include (state, last_joined_at);
create index creator_members_state_idx on creator_members (creator_id, state, joined_at desc, member_id desc) include (last_joined_at);
-- creator_members now changes only with subscriptions: the default vacuum thresholds do.
alter table creator_members reset (autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor);
-- Activity updates clear the visibility map of the narrow table instead: vacuum it soon.
alter table member_activity set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
