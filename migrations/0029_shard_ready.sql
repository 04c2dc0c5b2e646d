-- Ready to shard by creator (issue #31, docs/sharding.md, test/shard-readiness.test.ts): the
-- two child tables that held a creator's rows without saying whose get a creator_id, copied
-- from their parent. Their keys still lack it, like every table keyed by id alone: that is the
-- composite-keys migration the plan lists, not this one.
--
-- The code writes creator_id itself (posts.repo, challenges/standings). A node still running
-- the code before this migration (a rolling deploy) inserts without it: a trigger fills it from
-- the parent then, so no write fails. A later migration may drop the triggers.

alter table post_counts add column creator_id uuid;
update post_counts c set creator_id = p.creator_id from posts p where p.id = c.post_id and c.creator_id is null;
alter table post_counts alter column creator_id set not null;

alter table challenge_day_ranks add column creator_id uuid;
update challenge_day_ranks r set creator_id = c.creator_id from challenges c where c.id = r.challenge_id and r.creator_id is null;
alter table challenge_day_ranks alter column creator_id set not null;

create function post_counts_creator() returns trigger
language plpgsql
as $$
begin
  if new.creator_id is null then
    select p.creator_id into new.creator_id from posts p where p.id = new.post_id;
  end if;
  return new;
end
$$;
create trigger post_counts_creator before insert on post_counts
  for each row when (new.creator_id is null) execute function post_counts_creator();

create function challenge_day_ranks_creator() returns trigger
language plpgsql
as $$
begin
  if new.creator_id is null then
    select c.creator_id into new.creator_id from challenges c where c.id = new.challenge_id;
  end if;
  return new;
end
$$;
create trigger challenge_day_ranks_creator before insert on challenge_day_ranks
  for each row when (new.creator_id is null) execute function challenge_day_ranks_creator();
