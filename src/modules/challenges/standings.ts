import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';
import { recomputed } from './scores.js';

const DAY_MS = 86_400_000;

/** The UTC day (YYYY-MM-DD) `at` falls on. */
export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/**
 * The daily job behind `delta`: the ranks each challenge had at the end of the previous UTC
 * day, kept in challenge_day_ranks. Idempotent per day and safe on several nodes: a
 * challenge is claimed by moving challenges.ranked_day forward in the transaction that
 * writes its ranks, so a second node (or a second run) waits on that row and then finds
 * the day done.
 *
 * Run late (a node down at midnight), it still ranks the day as it ended: the current
 * scores are the day's end for every member who has written no log since, and the others
 * are recomputed from their logs written before midnight. Only a log deleted since midnight
 * cannot be brought back; its member is ranked without it.
 */
export function createStandings({ db, now }: { db: Db; now: () => Date }) {
  async function rankChallenge(trx: Executor, challengeId: string, day: string, cutoff: Date): Promise<boolean> {
    const claimed = await trx
      .updateTable('challenges')
      .set({ ranked_day: day })
      .where('id', '=', challengeId)
      .where('canceled_at', 'is', null)
      .where((eb) => eb.or([eb('ranked_day', 'is', null), eb('ranked_day', '<', day)]))
      .returning(['creator_id', 'starts_at', 'ends_at'])
      .executeTakeFirst();
    if (!claimed) return false;
    // Participants who wrote a log in the window since the cutoff: their current score is past the day's end.
    const moved = (
      await sql<{ member_id: string }>`
        select p.member_id from challenge_participants p
        where p.challenge_id = ${challengeId} and p.joined_at < ${cutoff}
          and exists (select 1 from workout_logs l where l.member_id = p.member_id and l.created_at >= ${cutoff}
                        and l.performed_at >= ${claimed.starts_at} and l.performed_at < ${claimed.ends_at})`.execute(trx)
    ).rows.map((r) => r.member_id);
    await sql`
      insert into challenge_day_ranks (challenge_id, creator_id, member_id, day, rank)
      select ${challengeId}, ${claimed.creator_id}::uuid, s.member_id, ${day}::date, row_number() over (order by s.score desc, s.reached_at, s.member_id)
      from (
        select member_id, score, reached_at from challenge_participants
        where challenge_id = ${challengeId} and joined_at < ${cutoff} and member_id <> all(${moved}::uuid[])
        union all
        select member_id, score, reached_at from (${recomputed(sql`p.challenge_id = ${challengeId} and p.member_id = any(${moved}::uuid[])`, cutoff)}) r
      ) s
      on conflict (challenge_id, member_id) do update set day = excluded.day, rank = excluded.rank`.execute(trx);
    // Members who have left since, or joined after the day ended, have no rank for it.
    await trx.deleteFrom('challenge_day_ranks').where('challenge_id', '=', challengeId).where('day', '<', day).execute();
    return true;
  }

  return {
    /** Ranks the previous UTC day for every challenge that ran during it and is not ranked for it yet. */
    async run(): Promise<{ day: string; ranked: number }> {
      const cutoff = new Date(`${utcDay(now())}T00:00:00.000Z`);
      const dayStart = new Date(cutoff.getTime() - DAY_MS);
      const day = utcDay(dayStart);
      const due = await db
        .selectFrom('challenges')
        .select('id')
        .where('canceled_at', 'is', null)
        .where('ends_at', '>', dayStart)
        .where('starts_at', '<', cutoff)
        .where((eb) => eb.or([eb('ranked_day', 'is', null), eb('ranked_day', '<', day)]))
        .execute();
      let ranked = 0;
      for (const { id } of due) if (await db.transaction().execute((trx) => rankChallenge(trx, id, day, cutoff))) ranked++;
      return { day, ranked };
    },
  };
}

export type Standings = ReturnType<typeof createStandings>;
