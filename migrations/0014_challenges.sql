-- Challenges and their live leaderboards (issue #13, DESIGN §7).
--
-- A participant's score is kept on their row and moved by the write that changes it: the
-- logging statement adds a new log's gain (workout-logs/logging.repo.ts), and every change
-- that replays history (a deleted or back-dated log, joining, a changed window) recomputes
-- the member's rows from their logs (challenges/scores.ts). Reads never recompute: the
-- board is the index challenge_participants_board_idx walked in rank order.

create table challenges (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  community_id uuid not null references communities (id),
  name text not null,
  description text not null default '',
  metric text not null check (metric in ('workouts_count', 'workouts_with_exercise', 'volume_kg', 'streak_days')),
  exercise_id uuid references exercises (id),
  duration_days int not null check (duration_days between 1 and 365),
  starts_at timestamptz not null,
  -- starts_at + duration_days, stored: the window [starts_at, ends_at) is what the logging
  -- statement and the status filters compare against.
  ends_at timestamptz not null,
  tier_min_id uuid references tiers (id),
  -- Canceled: no more joins, scores frozen.
  canceled_at timestamptz,
  participants_count int not null default 0,
  -- The last UTC day whose end-of-day ranks are in challenge_day_ranks (the daily job).
  ranked_day date,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((metric = 'workouts_with_exercise') = (exercise_id is not null)),
  check (ends_at = starts_at + make_interval(days => duration_days))
);
create index challenges_creator_idx on challenges (creator_id, starts_at desc, id desc);
create index challenges_community_idx on challenges (community_id, starts_at desc, id desc);
-- The daily ranking job: challenges not canceled, by end.
create index challenges_ranking_idx on challenges (ends_at) where canceled_at is null;

-- One row per member taking part. The primary key leads with the member: the logging
-- statement finds a member's challenges by it, once per log. The board index is the
-- leaderboard in rank order (score desc, then who reached it first), so a page is an index
-- walk and a member's rank two index range counts.
create table challenge_participants (
  member_id uuid not null references members (id),
  challenge_id uuid not null references challenges (id),
  creator_id uuid not null references creators (id),
  joined_at timestamptz not null,
  score numeric(16, 2) not null default 0,
  -- When the score was reached in the member's training: the latest performed_at of the
  -- logs that count (streak_days: the start of the UTC day the first longest run ended);
  -- joined_at while the score is 0.
  reached_at timestamptz not null,
  -- streak_days only: bit i set = at least one log on the i-th UTC day of the window.
  days varbit,
  primary key (member_id, challenge_id)
) with (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
create index challenge_participants_board_idx on challenge_participants (challenge_id, score desc, reached_at, member_id);

-- Ranks at the end of the last ranked UTC day (challenges.ranked_day), for `delta`.
create table challenge_day_ranks (
  challenge_id uuid not null references challenges (id),
  member_id uuid not null,
  day date not null,
  rank int not null,
  primary key (challenge_id, member_id)
) with (autovacuum_vacuum_scale_factor = 0.05);

-- Longest run of set bits: the streak_days score of a participant's days.
create function longest_run(b varbit) returns int
language sql immutable strict parallel safe
as $$
  select coalesce(max(length(r)), 0)::int from regexp_split_to_table(b::text, '0+') r
$$;

-- When a streak of `days` was reached: the start of the UTC day on which its first longest
-- run ended (day 0 = first_day). Null for no run.
create function streak_reached(b varbit, first_day date) returns timestamptz
language sql immutable strict parallel safe
as $$
  select case when l > 0 then ((first_day + strpos(b::text, repeat('1', l)) + l - 2)::timestamp at time zone 'UTC') end
  from (select longest_run(b) as l) x
$$;
