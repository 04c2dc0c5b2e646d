-- Members per directory scope (issue #32): an unfiltered member list's total is one row read
-- here, not a count over up to MEMBERS_EXACT_COUNT_LIMIT index entries on every request. Kept
-- by statement-level triggers on the directory's own tables, so every writer (the mirror's
-- refresh, rebuilds, the scale seeders) keeps it without knowing of it, in its transaction.
-- scope_id: the creator's all-communities scope (zeros), a community, or a tier (the same
-- keyspace: uuids never collide). A scope with no row has no members.
create table directory_totals (
  creator_id uuid not null,
  scope_id uuid not null,
  members bigint not null,
  primary key (creator_id, scope_id)
);

-- Adds signed deltas, in key order (two writers lock rows in the same order: no deadlock).
-- Several rows of one key are summed first: one statement may not update a row twice.
create function directory_totals_add(creators uuid[], scopes uuid[], deltas bigint[]) returns void
language sql
as $$
  insert into directory_totals as t (creator_id, scope_id, members)
  select creator_id, scope_id, sum(delta) from unnest(creators, scopes, deltas) as x(creator_id, scope_id, delta)
  group by 1, 2 having sum(delta) <> 0 order by 1, 2
  on conflict (creator_id, scope_id) do update set members = t.members + excluded.members
$$;

create function directory_totals_creator_members() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'INSERT' then
    perform directory_totals_add(array_agg(creator_id), array_agg('00000000-0000-0000-0000-000000000000'::uuid), array_agg(1::bigint)) from new_rows;
  else
    perform directory_totals_add(array_agg(creator_id), array_agg('00000000-0000-0000-0000-000000000000'::uuid), array_agg(-1::bigint)) from old_rows;
  end if;
  return null;
end $$;

-- A community row counts for its community and its tier; an update may move it to another tier.
create function directory_totals_community_members() returns trigger
language plpgsql
as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform directory_totals_add(array_agg(creator_id), array_agg(scope_id), array_agg(-1::bigint))
    from (select creator_id, community_id as scope_id from old_rows union all select creator_id, tier_id from old_rows) x;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform directory_totals_add(array_agg(creator_id), array_agg(scope_id), array_agg(1::bigint))
    from (select creator_id, community_id as scope_id from new_rows union all select creator_id, tier_id from new_rows) x;
  end if;
  return null;
end $$;

create trigger directory_totals_insert after insert on creator_members referencing new table as new_rows
  for each statement execute function directory_totals_creator_members();
create trigger directory_totals_delete after delete on creator_members referencing old table as old_rows
  for each statement execute function directory_totals_creator_members();
create trigger directory_totals_insert after insert on community_members referencing new table as new_rows
  for each statement execute function directory_totals_community_members();
create trigger directory_totals_update after update on community_members referencing old table as old_rows new table as new_rows
  for each statement execute function directory_totals_community_members();
create trigger directory_totals_delete after delete on community_members referencing old table as old_rows
  for each statement execute function directory_totals_community_members();

insert into directory_totals (creator_id, scope_id, members)
select creator_id, '00000000-0000-0000-0000-000000000000'::uuid, count(*) from creator_members group by 1;
insert into directory_totals (creator_id, scope_id, members)
select creator_id, scope_id, count(*) from (
  select creator_id, community_id as scope_id from community_members union all select creator_id, tier_id from community_members
) x group by 1, 2;
