-- The score bands of 0037 without log(numeric) (issue #32, item 3). PostgreSQL computes a
-- numeric logarithm to 16 digits: ~14 µs a call on the development machine, and the bands
-- trigger called it twice for every volume score a log moved (its old and new rows), the rank
-- read six times: ~3 % of the machine's samples under keyed logging (`perf`), where
-- counting the integer part's digits costs a fortieth of that.
--
-- The same rule (whole numbers below 1,000, three significant digits from 1,000 on), now exact:
-- log()'s 16 digits round a score just below 10^13 or 10^14 (9,999,999,999,999.99) up to the
-- next power of ten, so the old form put it one digit short (9,900,000,000,000, not
-- 9,990,000,000,000). For every score below 10^12 the two agree (3M scores compared, every
-- power of ten ± 0.01 among them); the bands of a challenge holding a score of 10^12 or more
-- are counted again below, so the bands and the rank read keep agreeing on one rule.
create or replace function score_band(s numeric) returns numeric
language sql immutable parallel safe as $$
  select case when s < 1000 then floor(s) else trunc(s, 3 - length(trunc(s)::text)) end
$$;

create or replace function score_band_end(band numeric) returns numeric
language sql immutable parallel safe as $$
  select case when band < 1000 then band + 1 else band + power(10, length(trunc(band)::text) - 3)::bigint end
$$;

-- Writers of participants (other nodes, still on the previous release) wait until this commits,
-- so no score moves between the recount and the new rule.
lock table challenge_participants in share mode;

delete from challenge_score_bands b
  where exists (select 1 from challenge_participants p where p.challenge_id = b.challenge_id and p.score >= 1e12);

insert into challenge_score_bands (creator_id, challenge_id, band, slot, participants)
select p.creator_id, p.challenge_id, score_band(p.score), 0, count(*)::int
from challenge_participants p
where exists (select 1 from challenge_participants q where q.challenge_id = p.challenge_id and q.score >= 1e12)
group by 1, 2, 3;
