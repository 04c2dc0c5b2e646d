-- Training: the exercise catalog, workout programs, members' workout logs and their
-- personal records (DESIGN §5, §7). Sized for 10M logged sets per creator: logging a
-- workout touches only the rows of that log and the member's record rows for its
-- exercises, each through an index that leads with its owner.

-- The catalog. creator_id null = the global catalog, seeded (upserted by id) at start-up
-- from src/modules/exercises/catalog.data.ts, the reviewed source of truth; otherwise a
-- creator's private exercise, visible to that creator and their members.
create table exercises (
  id uuid primary key,
  creator_id uuid references creators (id),
  -- Global exercises: kebab-case, names the video path (video_url = base URL + slug).
  slug text,
  name text not null,
  name_pt text,
  muscle_group text not null check (muscle_group in ('chest', 'back', 'shoulders', 'biceps', 'triceps', 'forearms', 'core', 'glutes',
    'quadriceps', 'hamstrings', 'calves', 'full_body', 'cardio')),
  secondary_muscles text[] not null default '{}',
  equipment text[] not null,
  kind text not null check (kind in ('weighted', 'bodyweight', 'timed')),
  -- Creators' own exercises may point at their own video; global ones derive it from the slug.
  video_url text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((creator_id is null) = (slug is not null))
);
create unique index exercises_global_slug_key on exercises (slug) where creator_id is null;
create unique index exercises_creator_name_key on exercises (creator_id, lower(name)) where creator_id is not null;
create index exercises_catalog_idx on exercises (creator_id, muscle_group, name);

create table workout_programs (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  community_id uuid not null references communities (id),
  name text not null,
  description text not null default '',
  duration_weeks integer not null check (duration_weeks between 1 and 52),
  frequency_per_week integer not null check (frequency_per_week between 1 and 7),
  level text not null check (level in ('beginner', 'intermediate', 'advanced')),
  goal text not null check (goal in ('hypertrophy', 'strength', 'endurance', 'cutting')),
  -- DELETE is soft: members' logs keep pointing at the workouts they followed.
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index workout_programs_creator_idx on workout_programs (creator_id, created_at, id) where deleted_at is null;
create index workout_programs_community_idx on workout_programs (creator_id, community_id, created_at, id) where deleted_at is null;

create table workouts (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  program_id uuid not null references workout_programs (id),
  name text not null,
  -- Order within the program, 0-based; rewritten as a whole by the ordering route.
  position integer not null,
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index workouts_program_idx on workouts (creator_id, program_id, position) where deleted_at is null;

-- A workout's prescribed exercises, replaced as a whole when the workout changes.
create table workout_exercises (
  creator_id uuid not null references creators (id),
  workout_id uuid not null references workouts (id),
  position integer not null,
  exercise_id uuid not null references exercises (id),
  sets integer not null check (sets between 1 and 20),
  reps text not null,
  load_kg numeric(7, 2) check (load_kg >= 0),
  rest_sec integer check (rest_sec between 0 and 900),
  primary key (workout_id, position)
);

-- A member's logged workout. creator_id (and community_id) say whose community it was
-- done in, taken from the workout's program or the community named; both null for a
-- personal log. Logs are the member's own data, so the member-facing index leads with
-- member_id and the creator-facing one with creator_id.
create table workout_logs (
  id uuid primary key,
  member_id uuid not null references members (id),
  creator_id uuid references creators (id),
  community_id uuid references communities (id),
  workout_id uuid references workouts (id),
  performed_at timestamptz not null,
  sets_count integer not null,
  created_at timestamptz not null default now()
);
create index workout_logs_member_idx on workout_logs (member_id, performed_at desc, id desc);
create index workout_logs_creator_member_idx on workout_logs (creator_id, member_id, performed_at desc, id desc) where creator_id is not null;

-- One row per performed set. No creator_id: a set belongs to its log (whose creator_id
-- says where it happened) and its history is read per member and exercise.
create table workout_sets (
  log_id uuid not null references workout_logs (id) on delete cascade,
  position smallint not null,
  member_id uuid not null,
  exercise_id uuid not null references exercises (id),
  -- Repeated from the log so PR recomputation reads one index in time order.
  performed_at timestamptz not null,
  reps integer not null check (reps > 0),
  load_kg numeric(7, 2) not null check (load_kg >= 0),
  is_warmup boolean not null default false,
  rpe numeric(3, 1),
  primary key (log_id, position)
);
-- PR history reads (recomputation after a deletion or a back-dated log, the "is anything
-- later?" check when logging) only ever want working sets of one member and exercise in
-- time order: a partial index covering exactly them, index-only for the values.
create index workout_sets_history_idx on workout_sets (member_id, exercise_id, performed_at, log_id, position)
  include (reps, load_kg) where not is_warmup;

-- Personal-record state per member × exercise × kind: the best value so far and the set
-- holding it, so logging compares against these rows instead of scanning history.
-- previous_value null: the holder is the baseline (nothing earlier to beat), not a PR.
-- No foreign key to workout_logs: deleting a log recomputes these rows in the same
-- transaction, and a key would need its own index on every insert.
create table personal_records (
  member_id uuid not null references members (id),
  exercise_id uuid not null references exercises (id),
  kind text not null check (kind in ('max_load', 'est_1rm', 'max_volume', 'max_reps')),
  value double precision not null,
  previous_value double precision,
  log_id uuid not null,
  set_position smallint not null,
  -- The holder log's creator (null for a personal log): the creator sees PRs made in their communities.
  creator_id uuid,
  performed_at timestamptz not null,
  updated_at timestamptz not null default now(),
  primary key (member_id, exercise_id, kind)
);
create index personal_records_creator_idx on personal_records (creator_id, member_id) where creator_id is not null;

-- "Does this member hold a live subscription to this community?" is asked on every member
-- program read and every community log; the existing indexes lead with creator_id.
create index subscriptions_member_live_idx on subscriptions (member_id, community_id)
  where status in ('trialing', 'active', 'past_due');
