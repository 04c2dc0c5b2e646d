import { ISO } from '../../db/tx.js';
import { activityIsNewer } from '../activity/activity.js';
import { SCORE_NEW_LOGS } from '../challenges/scores.js';
import { LIVE_STATUSES } from '../programs/access.js';
import { WANTS } from '../events/outbox.js';

/**
 * The hot path of logging workouts: ONE statement that checks a batch of logs (one per
 * member), applies the PR rules of prs.ts to each member's record holders and writes the
 * logs, their sets, the moved holders, the member's activity and their challenge scores
 * (challenges/scores.ts SCORE_NEW_LOGS) — or, per log, writes nothing and says why. The
 * rules are written twice (here for the newest-log case, in prs.ts for everything else);
 * log-statement.test.ts proves on the database that the two agree on random histories.
 * A batch is the logs that arrived together (src/db/combiner.ts): one executor start-up,
 * round trip and commit for all of them.
 *
 * Idempotency-Key (migrations/0038, 0041): a keyed log's key is locked and looked up here
 * (a key holding an answer: nothing written, outcome `replay` with the stored row) and a
 * written log stores its answer's data under its key in this same statement, so a keyed log
 * costs no lookup before it, no transaction around it and no statement after it, and after a
 * crash it exists with its answer or not at all. A retry racing its original (across nodes)
 * waits on the key's lock until the original's batch commits, then replays its answer.
 *
 * Concurrency (migrations/0008): each log's write is guarded by its member's training
 * version as read in this statement's snapshot. A change of the same member's history
 * committed or in flight meanwhile makes that log's guard fail (`conflict`, nothing of it
 * written); the caller retries. Versions are bumped in member order, so two batches
 * sharing members (two nodes) lock them in the same order and cannot deadlock.
 *
 * Constant text, every value an array parameter ($1–$7 and $15–$17 per log, $8–$14 per
 * set, $18 the keys' TTL in hours; `n` is the log's 1-based place in the batch), with a
 * `prepare:` marker: on PostgreSQL each
 * connection parses and plans it once (src/db/prepared.ts). Shared rows (exercises,
 * workouts, communities) are also matched against the whole array (`= any`), so the one
 * generic plan has an index condition to probe them by once those tables are large.
 */
// Inlined, not bound: a bound list would hide the partial index subscriptions_member_live_idx
// from a generic plan.
const LIVE = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

export const LOG_BATCH = `/*prepare:workout_log_batch*/
with logs as (
  select l.n::int as n, l.id, l.member_id, l.workout_id, l.community_id, l.performed_at, l.created_at, l.valid, l.scope, l.key, l.hash
  from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::timestamptz[], $6::timestamptz[], $7::boolean[],
              $15::text[], $16::text[], $17::text[])
       with ordinality as l(id, member_id, workout_id, community_id, performed_at, created_at, valid, scope, key, hash, n)
), known as (
  -- A key holding an answer (a retry of an answered request): the log is not written, the
  -- answer is replayed. Expired keys and claims of the old design count as none
  -- (http/idempotency-store.ts).
  -- The keys' locks are taken here, before any row of the batch is written, and held to the
  -- commit: a request with one of these keys waits for this batch (migrations/0041).
  select l.n, k.request_hash, k.state, k.status_code, k.content_type, k.response_body
  -- A batch with no key does not call it at all (a one-time filter).
  from logs l join (select * from tribes_keys_locked($15::text[], $16::text[], $18::int)
                    where exists (select 1 from unnest($16::text[]) as u(key) where u.key is not null)) k on k.scope = l.scope and k.key = l.key
  where k.state <> 'in_progress'
), input as (
  select t.n, t.position, t.exercise_id, t.reps, t.load_kg, t.is_warmup, t.rpe, round(t.load_kg * 100)::bigint as load_cents
  from unnest($8::int[], $9::int[], $10::uuid[], $11::int[], $12::numeric[], $13::boolean[], $14::numeric[])
       as t(n, position, exercise_id, reps, load_kg, is_warmup, rpe)
), log_exercises as (
  select distinct i.n, l.member_id, l.performed_at, i.exercise_id from input i join logs l on l.n = i.n
), visible as (
  select le.n, e.id, e.name from log_exercises le join exercises e on e.id = le.exercise_id
  where e.id = any($10::uuid[]) and (e.creator_id is null or e.creator_id in (
    select s.creator_id from subscriptions s where s.member_id = le.member_id and s.status in (${LIVE})))
), workout as (
  select l.n, p.creator_id, p.community_id, exists (
      select 1 from subscriptions s where s.member_id = l.member_id and s.community_id = p.community_id and s.status in (${LIVE})) as live
  from logs l join workouts w on w.id = l.workout_id join workout_programs p on p.id = w.program_id
  where w.id = any($3::uuid[]) and w.deleted_at is null and p.deleted_at is null
), community as (
  select l.n, c.creator_id, exists (
      select 1 from subscriptions s where s.member_id = l.member_id and s.community_id = c.id and s.status in (${LIVE})) as live
  from logs l join communities c on c.id = l.community_id
  where c.id = any($4::uuid[])
), place as (
  -- Where each log happened: the workout's program, else the community named, else nowhere (personal).
  select l.n,
         case when l.workout_id is not null then w.creator_id else c.creator_id end as creator_id,
         case when l.workout_id is not null then w.community_id else l.community_id end as community_id,
         case when l.workout_id is not null then coalesce(w.live and (l.community_id is null or w.community_id = l.community_id), false)
              when l.community_id is not null then coalesce(c.live, false)
              else true end as ok
  from logs l left join workout w on w.n = l.n left join community c on c.n = l.n
), state as (
  select l.n,
         coalesce((select t.version from member_training t where t.member_id = l.member_id), 0) as version,
         exists (select 1 from log_exercises le where le.n = l.n and exists (
                   select 1 from workout_sets ws
                   where ws.member_id = le.member_id and ws.exercise_id = le.exercise_id
                     and ws.performed_at > le.performed_at and not ws.is_warmup)) as later
  from logs l
), gate as (
  select l.n, l.member_id, s.version from logs l join state s on s.n = l.n join place p on p.n = l.n
  where l.valid and p.ok and not s.later and not exists (select 1 from known k where k.n = l.n)
    and (select count(*) from visible v where v.n = l.n) = (select count(*) from log_exercises le where le.n = l.n)
), bump as (
  insert into member_training as t (member_id, version)
  select g.member_id, g.version + 1 from gate g order by g.member_id
  on conflict (member_id) do update set version = t.version + 1, updated_at = now() where t.version = excluded.version - 1
  returning t.member_id
), written as (
  select l.n from logs l join bump b on b.member_id = l.member_id
), new_log as (
  insert into workout_logs (id, member_id, creator_id, community_id, workout_id, performed_at, created_at, sets_count)
  select l.id, l.member_id, p.creator_id, p.community_id, l.workout_id, l.performed_at, l.created_at,
         (select count(*) from input i where i.n = l.n)::int
  from written w join logs l on l.n = w.n join place p on p.n = w.n
), new_sets as (
  insert into workout_sets (log_id, position, member_id, exercise_id, performed_at, reps, load_kg, is_warmup, rpe)
  select l.id, i.position, l.member_id, i.exercise_id, l.performed_at, i.reps, i.load_kg, i.is_warmup, i.rpe
  from written w join logs l on l.n = w.n join input i on i.n = w.n
), working as (
  -- What each working set counts for (prs.ts setValues: integer hundredths, so ties are exact).
  select i.n, i.exercise_id, i.position, k.kind, k.value
  from input i cross join lateral (values
    ('max_load', case when i.load_cents > 0 then i.load_cents::float8 / 100 end),
    ('est_1rm', case when i.load_cents > 0 then case when i.reps = 1 then i.load_cents::float8 / 100 else (i.load_cents * (30 + i.reps))::float8 / 3000 end end),
    ('max_volume', case when i.load_cents > 0 then (i.load_cents * i.reps)::float8 / 100 end),
    ('max_reps', i.reps::float8)) as k(kind, value)
  where not i.is_warmup and k.value is not null
), best as (
  -- Per log, exercise and kind, the log's best set: the first one reaching the maximum.
  select distinct on (n, exercise_id, kind) n, exercise_id, kind, value, position from working
  order by n, exercise_id, kind, value desc, position
), moved as (
  -- A holder moves when there was none (the baseline) or the best strictly beats it.
  select b.n, b.exercise_id, b.kind, b.value, b.position,
         coalesce(h.value, (select max(w.value) from working w
                            where w.n = b.n and w.exercise_id = b.exercise_id and w.kind = b.kind and w.position < b.position)) as previous_value
  from best b join logs l on l.n = b.n
  left join personal_records h on h.member_id = l.member_id and h.exercise_id = b.exercise_id and h.kind = b.kind
  where h.value is null or b.value > h.value
), active as (
  -- The member's activity in the creator's communities (activity/activity.ts), at most once an hour.
  update member_activity m set last_active_at = l.created_at
  from written w join logs l on l.n = w.n join place p on p.n = w.n
  where m.creator_id = p.creator_id and m.member_id = l.member_id and ${activityIsNewer('m.last_active_at', 'l.created_at')}
), ${SCORE_NEW_LOGS}, records as (
  insert into personal_records (member_id, exercise_id, kind, value, previous_value, log_id, set_position, creator_id, performed_at)
  select l.member_id, m.exercise_id, m.kind, m.value, m.previous_value, l.id, m.position, p.creator_id, l.performed_at
  from written w join logs l on l.n = w.n join place p on p.n = w.n join moved m on m.n = w.n
  order by l.member_id, m.exercise_id, m.kind
  on conflict (member_id, exercise_id, kind) do update set
    value = excluded.value, previous_value = excluded.previous_value, log_id = excluded.log_id,
    set_position = excluded.set_position, creator_id = excluded.creator_id, performed_at = excluded.performed_at, updated_at = now()
), log_events as (
  -- Outgoing events (events/outbox.ts, the same rows recordEvents writes): workout.logged for a
  -- log in a creator's community, pr.achieved per record it set; events.ts builds the same
  -- data for a back-dated log. Built only for creators with an endpoint that wants the type.
  select p.creator_id, 'workout.logged' as type, jsonb_build_object(
           'log_id', l.id, 'member_id', l.member_id, 'community_id', p.community_id, 'workout_id', l.workout_id,
           'performed_at', ${ISO('l.performed_at')}, 'sets_count', (select count(*) from input i where i.n = l.n),
           'prs_count', (select count(*) from moved m where m.n = l.n and m.previous_value is not null)) as data
  from written w join logs l on l.n = w.n join place p on p.n = w.n
  where p.community_id is not null
  union all
  select p.creator_id, 'pr.achieved', jsonb_build_object(
           'member_id', l.member_id, 'log_id', l.id, 'community_id', p.community_id, 'exercise_id', m.exercise_id,
           'exercise_name', (select v.name from visible v where v.n = m.n and v.id = m.exercise_id), 'kind', m.kind,
           'value', round(m.value::numeric, 2), 'previous_value', round(m.previous_value::numeric, 2), 'performed_at', ${ISO('l.performed_at')})
  from written w join logs l on l.n = w.n join place p on p.n = w.n join moved m on m.n = w.n
  where p.community_id is not null and m.previous_value is not null
), new_events as (
  insert into events (id, creator_id, type, data)
  select tribes_uuid_v7(), e.creator_id, e.type, e.data from log_events e
  where exists (select 1 from webhook_endpoints x where x.creator_id = e.creator_id and ${WANTS('x', 'e.type')})
  returning id, creator_id, type
), new_deliveries as (
  insert into webhook_deliveries (id, creator_id, endpoint_id, event_id, event_type, next_attempt_at)
  select tribes_uuid_v7(), e.creator_id, x.id, e.id, e.type, now()
  from new_events e join webhook_endpoints x on x.creator_id = e.creator_id and ${WANTS('x', 'e.type')}
), found as (
  -- What each log's answer is made of (logging.repo.ts resultOf): answered, and stored for a keyed log.
  select l.n,
         (select coalesce(json_agg(json_build_array(v.id, v.name)), '[]') from visible v where v.n = l.n) as visible,
         (select json_build_object('creatorId', x.creator_id, 'communityId', x.community_id, 'live', x.live) from workout x where x.n = l.n) as workout,
         (select json_build_object('creatorId', x.creator_id, 'live', x.live) from community x where x.n = l.n) as community,
         (select coalesce(json_agg(json_build_array(m.exercise_id, m.kind, m.value, m.previous_value, m.position)), '[]')
          from moved m where m.n = l.n and m.previous_value is not null and w.n is not null) as prs
  from logs l left join written w on w.n = l.n
), stored as (
  -- A written keyed log's answer: the data the route rebuilds it from (state 'data'), under
  -- the key locked in known, which held no answer.
  insert into idempotency_keys (scope, key, request_hash, state, status_code, content_type, response_body)
  select l.scope, l.key, l.hash, 'data', 201, 'application/json; charset=utf-8',
         json_build_object('id', l.id, 'created_at', ${ISO('l.created_at')}, 'visible', f.visible, 'workout', f.workout,
                           'community', f.community, 'prs', f.prs)::text
  from written w join logs l on l.n = w.n join found f on f.n = w.n
  where l.key is not null
)
select case when k.n is not null then 'replay'
            when w.n is not null then 'written'
            when g.n is not null then 'conflict'
            when s.later then 'later'
            else 'refused' end as outcome,
       f.visible, f.workout, f.community, f.prs,
       k.request_hash, k.state, k.status_code, k.content_type, k.response_body
from logs l join found f on f.n = l.n left join written w on w.n = l.n left join gate g on g.n = l.n left join state s on s.n = l.n
     left join known k on k.n = l.n
order by l.n`;
