import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/tx.js';

/**
 * The scoring rules of DESIGN §7, written in the two places a score moves, both here:
 *
 * - SCORE_NEW_LOGS, a part of the logging statement (workout-logs/log-batch.ts): adds
 *   each new log's gain to the challenges it counts for. Flat cost per log: one primary-key
 *   probe for the member's challenges, one row update per challenge the log counts in.
 * - rescore(): recomputes chosen participants from their logs, for every change that
 *   replays history (a deleted or back-dated log, joining, a window moved before the start).
 *
 * scores.test.ts proves on the database that the two agree with a plain recomputation in
 * TypeScript on random histories. A log counts for a challenge when the member takes part,
 * the challenge is not canceled (canceled scores are frozen), its performed_at is in
 * [starts_at, ends_at) — wherever it was logged (a personal log counts too) — and it was
 * written while the member's subscription qualified (before scoring_stopped_at, set by
 * qualification.ts when it stops qualifying).
 *
 * - workouts_count: +1 per log.
 * - workouts_with_exercise: +1 per log with at least one set (warm-ups too) of the exercise.
 * - volume_kg: Σ reps × load_kg over the log's working sets (warm-ups excluded).
 * - streak_days: the longest run of consecutive UTC days with a log (`days`, one bit a day).
 *
 * Ties rank by `reached_at`: when the member's training reached the score (the latest
 * performed_at of the logs that count; for a streak, the UTC day its first longest run
 * ended), so a back-dated log can never move a member ahead of someone who got there first.
 */

/** UTC day number of a timestamp within a window starting at `startsAt` (0 = the start's day). */
const dayIn = (at: string, startsAt: string) => `(((${at}) at time zone 'UTC')::date - ((${startsAt}) at time zone 'UTC')::date)`;

/**
 * CTEs for the logging statement. Expects `written(n)` (logs written by this statement),
 * `logs(n, member_id, performed_at, …)` and `input(n, exercise_id, reps, load_kg, is_warmup)`;
 * one log per member per statement, so each participant row is updated at most once.
 * The update reads the row's current version (score + gain, set_bit on the current days),
 * so it composes with any change committed meanwhile.
 */
export const SCORE_NEW_LOGS = `log_gains as (
  -- What each log brings to a challenge (challenges/scores.ts), in one pass over the sets.
  select i.n, coalesce(sum(i.reps * i.load_kg) filter (where not i.is_warmup), 0) as volume, array_agg(i.exercise_id) as exercises
  from input i group by i.n
), counts_for as (
  -- The challenges each written log counts for, with its gain there.
  select l.n, p.member_id, p.challenge_id, c.metric, c.starts_at, l.performed_at, ${dayIn('l.performed_at', 'c.starts_at')} as day,
         case c.metric
           when 'workouts_count' then 1
           when 'workouts_with_exercise' then (c.exercise_id = any(g.exercises))::int
           when 'volume_kg' then g.volume
           else 0 end as gain
  from written w join logs l on l.n = w.n join log_gains g on g.n = w.n
  join challenge_participants p on p.member_id = l.member_id
  join challenges c on c.id = p.challenge_id
  where c.canceled_at is null and p.scoring_stopped_at is null and l.performed_at >= c.starts_at and l.performed_at < c.ends_at
), scored as (
  update challenge_participants p set
    score = case when f.metric = 'streak_days' then longest_run(set_bit(p.days, f.day, 1)) else p.score + f.gain end,
    reached_at = case when f.metric = 'streak_days' then streak_reached(set_bit(p.days, f.day, 1), (f.starts_at at time zone 'UTC')::date)
                      when p.score = 0 then f.performed_at
                      else greatest(p.reached_at, f.performed_at) end,
    days = case when f.metric = 'streak_days' then set_bit(p.days, f.day, 1) else p.days end
  from counts_for f
  where p.member_id = f.member_id and p.challenge_id = f.challenge_id
    and case when f.metric = 'streak_days' then f.day < length(p.days) and get_bit(p.days, f.day) = 0 else f.gain > 0 end
)`;

/**
 * Scores of the participants `where` selects (over `p` challenge_participants and `c`
 * challenges), recomputed from their logs; with `cutoff`, from the logs written before it
 * (the standings at a past moment). Rows: challenge_id, member_id, score, reached_at, days.
 */
export function recomputed(where: RawBuilder<unknown>, cutoff: Date | null) {
  return sql`
    with target as (
      select p.challenge_id, p.member_id, p.joined_at, p.scoring_stopped_at, c.metric, c.exercise_id, c.starts_at, c.ends_at,
             (c.starts_at at time zone 'UTC')::date as first_day,
             ${sql.raw(dayIn("c.ends_at - interval '1 microsecond'", 'c.starts_at'))} + 1 as day_count
      from challenge_participants p join challenges c on c.id = p.challenge_id
      where c.canceled_at is null and ${where}
    ), totals as (
      select t.challenge_id, t.member_id,
             coalesce(sum(g.gain), 0) as total,
             max(l.performed_at) filter (where g.gain > 0) as last_gain,
             array_agg(distinct ${sql.raw(dayIn('l.performed_at', 't.starts_at'))}) filter (where l.id is not null) as log_days
      from target t
      left join workout_logs l on l.member_id = t.member_id and l.performed_at >= t.starts_at and l.performed_at < t.ends_at
        and (${cutoff}::timestamptz is null or l.created_at < ${cutoff}::timestamptz)
        and (t.scoring_stopped_at is null or l.created_at < t.scoring_stopped_at)
      left join lateral (
        select case t.metric
                 when 'workouts_count' then 1
                 when 'workouts_with_exercise' then (exists (select 1 from workout_sets s where s.log_id = l.id and s.exercise_id = t.exercise_id))::int
                 when 'volume_kg' then (select coalesce(sum(s.reps * s.load_kg), 0) from workout_sets s where s.log_id = l.id and not s.is_warmup)
                 else 0 end as gain
      ) g on l.id is not null
      group by t.challenge_id, t.member_id
    ), bits as (
      select t.*, x.total, x.last_gain,
             case when t.metric = 'streak_days' then (
               select string_agg(case when d.i = any(x.log_days) then '1' else '0' end, '' order by d.i) from generate_series(0, t.day_count - 1) d(i)
             )::varbit end as days
      from target t join totals x on x.challenge_id = t.challenge_id and x.member_id = t.member_id
    )
    select challenge_id, member_id, days,
           case when metric = 'streak_days' then longest_run(days) else total end::numeric(16, 2) as score,
           case when metric = 'streak_days' then coalesce(streak_reached(days, first_day), joined_at) else coalesce(last_gain, joined_at) end as reached_at
    from bits`;
}

/** Recomputes and stores the scores of the participants `where` selects (see recomputed). */
export async function rescore(trx: Executor, where: RawBuilder<unknown>): Promise<void> {
  await sql`
    update challenge_participants p set score = x.score, reached_at = x.reached_at, days = x.days
    from (${recomputed(where, null)}) x
    where p.member_id = x.member_id and p.challenge_id = x.challenge_id
      and (p.score, p.reached_at, p.days) is distinct from (x.score, x.reached_at, x.days)`.execute(trx);
}

/** Every challenge of the member (a deleted or back-dated log); the caller holds the member's history lock. */
export const rescoreMember = (trx: Executor, memberId: string) => rescore(trx, sql`p.member_id = ${memberId}`);

