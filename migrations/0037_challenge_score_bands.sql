-- A challenge's participants counted by score band (issue #32 item 4): a member's rank is the
-- participants of the bands above theirs plus a count inside their own band, instead of a count
-- of up to half the board (a member's own row at 100k participants: ~8 ms of index walk).

-- The band of a score: whole numbers below 1,000, three significant digits from 1,000 on
-- (1234.5 → 1230), so a challenge has at most ~1,000 + 900 bands per decade of scores, and a
-- band holds what a count may walk cheaply. Immutable: the rank read and the counts below
-- must agree on it forever (a new rule is a new function and a rebuild).
create function score_band(s numeric) returns numeric
language sql immutable parallel safe as $$
  select case when s < 1000 then floor(s) else trunc(s, 2 - floor(log(s))::int) end
$$;

-- The first score above a band (the band is [band, score_band_end(band))).
create function score_band_end(band numeric) returns numeric
language sql immutable parallel safe as $$
  select case when band < 1000 then band + 1 else band + power(10, floor(log(band))::int - 2)::bigint end
$$;

-- Participants per challenge and band. Striped: a writer adds to the row of its slot (its
-- backend's pid mod 16), so logging transactions of different connections that move members
-- across the same bands do not queue on one counter row until they commit; a band's count is
-- the sum of its slots (a slot alone may be negative). creator_id first: distributed with the
-- creator's rows (docs/sharding.md).
create table challenge_score_bands (
  creator_id uuid not null,
  challenge_id uuid not null,
  band numeric not null,
  slot smallint not null,
  participants integer not null,
  primary key (creator_id, challenge_id, band, slot)
);

-- Kept by every writer of challenge_participants (joins, leaves, the logging statement's
-- scores, rescoring, seeders), in the writer's transaction: the rank read sees bands and
-- participants of one snapshot. Rows are added in key order, so two statements that share a
-- slot lock them in one order.
create function challenge_bands_moved() returns trigger
language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into challenge_score_bands as b (creator_id, challenge_id, band, slot, participants)
    select creator_id, challenge_id, score_band(score), (pg_backend_pid() % 16)::smallint, count(*)::int
    from new_rows group by 1, 2, 3 order by 1, 2, 3
    on conflict (creator_id, challenge_id, band, slot) do update set participants = b.participants + excluded.participants;
  elsif tg_op = 'DELETE' then
    insert into challenge_score_bands as b (creator_id, challenge_id, band, slot, participants)
    select creator_id, challenge_id, score_band(score), (pg_backend_pid() % 16)::smallint, -count(*)::int
    from old_rows group by 1, 2, 3 order by 1, 2, 3
    on conflict (creator_id, challenge_id, band, slot) do update set participants = b.participants + excluded.participants;
  else
    -- An update is its old rows leaving their bands and its new rows entering theirs; most
    -- score updates stay in their band and add nothing.
    insert into challenge_score_bands as b (creator_id, challenge_id, band, slot, participants)
    select creator_id, challenge_id, band, (pg_backend_pid() % 16)::smallint, sum(d)::int
    from (select creator_id, challenge_id, score_band(score) as band, 1 as d from new_rows
          union all
          select creator_id, challenge_id, score_band(score), -1 from old_rows) x
    group by 1, 2, 3 having sum(d) <> 0 order by 1, 2, 3
    on conflict (creator_id, challenge_id, band, slot) do update set participants = b.participants + excluded.participants;
  end if;
  return null;
end $$;

create trigger challenge_bands_insert after insert on challenge_participants referencing new table as new_rows
  for each statement execute function challenge_bands_moved();
create trigger challenge_bands_delete after delete on challenge_participants referencing old table as old_rows
  for each statement execute function challenge_bands_moved();
create trigger challenge_bands_update after update on challenge_participants referencing old table as old_rows new table as new_rows
  for each statement execute function challenge_bands_moved();

-- The participants of before this migration.
insert into challenge_score_bands (creator_id, challenge_id, band, slot, participants)
select creator_id, challenge_id, score_band(score), 0, count(*)::int from challenge_participants group by 1, 2, 3;
