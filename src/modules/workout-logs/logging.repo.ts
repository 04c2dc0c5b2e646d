import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { LIVE_STATUSES } from '../programs/access.js';
import type { PrKind } from './prs.js';
import type { NewLog } from './workout-logs.repo.js';

/**
 * The hot path of logging a workout: ONE statement that checks the log, applies the PR
 * rules of prs.ts to the member's record holders and writes the log, its sets and the
 * moved holders — or writes nothing and says why. The rules are written twice (here for
 * the newest-log case, in prs.ts for everything else); test/log-statement.test.ts proves
 * on the database that the two agree on random histories.
 *
 * Concurrency (migrations/0008): the write is guarded by the member's training version as
 * read in this statement's snapshot. A change of the same member's history committed or in
 * flight meanwhile makes the guard fail (`conflict`, nothing written); the caller retries.
 *
 * Constant text (arrays, not `in (...)` lists) with a `prepare:` marker: on PostgreSQL
 * each connection parses and plans it once (src/db/prepared.ts).
 */

// Inlined, not bound: a bound list would hide the partial index subscriptions_member_live_idx
// from a generic plan.
const LIVE = sql.raw(LIVE_STATUSES.map((s) => `'${s}'`).join(', '));

export interface LogPlace {
  creatorId: string;
  communityId: string;
  live: boolean;
}

export type LogOutcome = 'written' | 'conflict' | 'later' | 'refused';

export interface LogStatementResult {
  /** written; conflict: the member's history moved meanwhile; later: back-dated; refused: not valid (see the lookups). */
  outcome: LogOutcome;
  /** Exercises of the log the member may use, with their names. */
  visible: Map<string, string>;
  /** The workout named (undefined: none named; null: not found or deleted). */
  workout: LogPlace | null | undefined;
  community: Omit<LogPlace, 'communityId'> | null | undefined;
  prs: Array<{ exerciseId: string; kind: PrKind; value: number; previousValue: number; position: number }>;
}

const parsed = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

export function createLoggingRepo(db: Executor) {
  return {
    /**
     * Logs `log` if `valid` (the checks made without the database passed), every exercise is
     * one the member may use, the workout or community named exists and the member holds a
     * live subscription to it, no working set of these exercises is dated after it, and the
     * member's history did not move since the statement's snapshot.
     */
    async logNewest(log: NewLog, valid: boolean): Promise<LogStatementResult> {
      const s = log.sets;
      // The distinct exercises as one array: index conditions (= any) rather than semi-joins.
      const exerciseIds = [...new Set(s.map((x) => x.exerciseId))];
      const { rows } = await sql<Record<string, unknown>>`/*prepare:workout_log*/
        with input as (
          select t.position, t.exercise_id, t.reps, t.load_kg, t.is_warmup, t.rpe, round(t.load_kg * 100)::bigint as load_cents
          from unnest(${s.map((x) => x.position)}::int[], ${s.map((x) => x.exerciseId)}::uuid[], ${s.map((x) => x.reps)}::int[],
                      ${s.map((x) => x.loadKg)}::numeric[], ${s.map((x) => x.isWarmup)}::boolean[], ${s.map((x) => x.rpe)}::numeric[])
               as t(position, exercise_id, reps, load_kg, is_warmup, rpe)
        ), visible as (
          select e.id, e.name from exercises e
          where e.id = any(${exerciseIds}::uuid[])
            and (e.creator_id is null or e.creator_id in (
              select creator_id from subscriptions where member_id = ${log.member_id}::uuid and status in (${LIVE})))
        ), workout as (
          select p.creator_id, p.community_id, exists (
              select 1 from subscriptions where member_id = ${log.member_id}::uuid and community_id = p.community_id and status in (${LIVE})) as live
          from workouts w join workout_programs p on p.id = w.program_id
          where w.id = ${log.workout_id}::uuid and w.deleted_at is null and p.deleted_at is null
        ), community as (
          select c.creator_id, exists (
              select 1 from subscriptions where member_id = ${log.member_id}::uuid and community_id = c.id and status in (${LIVE})) as live
          from communities c where c.id = ${log.community_id}::uuid
        ), place as (
          -- Where the log happened: the workout's program, else the community named, else nowhere (personal).
          select case when ${log.workout_id}::uuid is not null then (select creator_id from workout) else (select creator_id from community) end as creator_id,
                 case when ${log.workout_id}::uuid is not null then (select community_id from workout) else ${log.community_id}::uuid end as community_id,
                 case when ${log.workout_id}::uuid is not null
                        then coalesce((select live and (${log.community_id}::uuid is null or community_id = ${log.community_id}::uuid) from workout), false)
                      when ${log.community_id}::uuid is not null then coalesce((select live from community), false)
                      else true end as ok
        ), state as (
          select coalesce((select version from member_training where member_id = ${log.member_id}::uuid), 0) as version,
                 exists (select 1 from workout_sets
                         where member_id = ${log.member_id}::uuid and exercise_id = any(${exerciseIds}::uuid[])
                           and performed_at > ${log.performed_at}::timestamptz and not is_warmup) as later
        ), gate as (
          select state.version from state, place
          where ${valid}::boolean and place.ok and not state.later
            and (select count(*) from visible) = ${exerciseIds.length}::int
        ), bump as (
          insert into member_training as t (member_id, version) select ${log.member_id}::uuid, version + 1 from gate
          on conflict (member_id) do update set version = t.version + 1, updated_at = now() where t.version = excluded.version - 1
          returning 1
        ), new_log as (
          insert into workout_logs (id, member_id, creator_id, community_id, workout_id, performed_at, created_at, sets_count)
          select ${log.id}::uuid, ${log.member_id}::uuid, place.creator_id, place.community_id, ${log.workout_id}::uuid,
                 ${log.performed_at}::timestamptz, ${log.created_at}::timestamptz, ${s.length}::int
          from bump, place
        ), new_sets as (
          insert into workout_sets (log_id, position, member_id, exercise_id, performed_at, reps, load_kg, is_warmup, rpe)
          select ${log.id}::uuid, i.position, ${log.member_id}::uuid, i.exercise_id, ${log.performed_at}::timestamptz, i.reps, i.load_kg, i.is_warmup, i.rpe
          from bump, input i
        ), working as (
          -- What each working set counts for (prs.ts setValues: integer hundredths, so ties are exact).
          select i.exercise_id, i.position, k.kind, k.value
          from input i cross join lateral (values
            ('max_load', case when i.load_cents > 0 then i.load_cents::float8 / 100 end),
            ('est_1rm', case when i.load_cents > 0 then case when i.reps = 1 then i.load_cents::float8 / 100 else (i.load_cents * (30 + i.reps))::float8 / 3000 end end),
            ('max_volume', case when i.load_cents > 0 then (i.load_cents * i.reps)::float8 / 100 end),
            ('max_reps', i.reps::float8)) as k(kind, value)
          where not i.is_warmup and k.value is not null
        ), best as (
          -- Per exercise and kind, the log's best set: the first one reaching the maximum.
          select distinct on (exercise_id, kind) exercise_id, kind, value, position from working
          order by exercise_id, kind, value desc, position
        ), holders as (
          select exercise_id, kind, value from personal_records
          where member_id = ${log.member_id}::uuid and exercise_id = any(${exerciseIds}::uuid[])
        ), moved as (
          -- A holder moves when there was none (the baseline) or the best strictly beats it.
          select b.exercise_id, b.kind, b.value, b.position,
                 coalesce(h.value, (select max(w.value) from working w where w.exercise_id = b.exercise_id and w.kind = b.kind and w.position < b.position)) as previous_value
          from best b left join holders h on h.exercise_id = b.exercise_id and h.kind = b.kind
          where h.value is null or b.value > h.value
        ), records as (
          insert into personal_records (member_id, exercise_id, kind, value, previous_value, log_id, set_position, creator_id, performed_at)
          select ${log.member_id}::uuid, m.exercise_id, m.kind, m.value, m.previous_value, ${log.id}::uuid, m.position, place.creator_id, ${log.performed_at}::timestamptz
          from bump, place, moved m
          on conflict (member_id, exercise_id, kind) do update set
            value = excluded.value, previous_value = excluded.previous_value, log_id = excluded.log_id,
            set_position = excluded.set_position, creator_id = excluded.creator_id, performed_at = excluded.performed_at, updated_at = now()
        )
        select case when exists (select 1 from bump) then 'written'
                    when exists (select 1 from gate) then 'conflict'
                    when (select later from state) then 'later'
                    else 'refused' end as outcome,
               (select coalesce(json_agg(json_build_array(id, name)), '[]') from visible) as visible,
               (select json_build_object('creatorId', creator_id, 'communityId', community_id, 'live', live) from workout) as workout,
               (select json_build_object('creatorId', creator_id, 'live', live) from community) as community,
               (select coalesce(json_agg(json_build_array(exercise_id, kind, value, previous_value, position)), '[]')
                from moved where previous_value is not null and exists (select 1 from bump)) as prs`.execute(db);
      const row = rows[0]!;
      return {
        outcome: row.outcome as LogOutcome,
        visible: new Map(parsed<Array<[string, string]>>(row.visible)),
        workout: log.workout_id ? (parsed<LogPlace | null>(row.workout) ?? null) : undefined,
        community: log.community_id ? (parsed<LogPlace | null>(row.community) ?? null) : undefined,
        prs: parsed<Array<[string, PrKind, number, number, number]>>(row.prs).map(([exerciseId, kind, value, previousValue, position]) => ({
          exerciseId,
          kind,
          value,
          previousValue,
          position,
        })),
      };
    },

    /**
     * Bumps the member's training version inside `trx` and so holds its row lock until the
     * transaction ends: changes that replay history (deletion, a back-dated log) run one at
     * a time per member, and a concurrent logging statement finds the version moved.
     */
    async lockHistory(memberId: string, trx: Executor) {
      await sql`insert into member_training as t (member_id, version) values (${memberId}, 1)
        on conflict (member_id) do update set version = t.version + 1, updated_at = now()`.execute(trx);
    },
  };
}

export type LoggingRepo = ReturnType<typeof createLoggingRepo>;
