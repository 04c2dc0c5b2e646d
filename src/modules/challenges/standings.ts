import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';
import { recordEvents } from '../events/outbox.js';
import { recomputed } from './scores.js';

const DAY_MS = 86_400_000;
/** challenge.finished carries the top of the final ranking: the whole list is the leaderboard API's. */
export const FINISHED_RANKING_MAX = 100;

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

  /**
   * challenge.finished for each challenge that has ended: claimed by the conditional update of
   * finished_event_at in the transaction that writes the event, so it is sent once across
   * nodes and runs. The ranking is the leaderboard's order (score, then who reached it first).
   */
  async function finishEnded(): Promise<number> {
    let told = 0;
    // In pages of 100 until none is left (a node that was down meanwhile catches up at once).
    for (;;) {
      const ended = await db
        .selectFrom('challenges')
        .select('id')
        .where('finished_event_at', 'is', null)
        .where('canceled_at', 'is', null)
        .where('ends_at', '<=', now())
        .orderBy('ends_at')
        .limit(100)
        .execute();
      if (ended.length === 0) return told;
      told += await finishEach(ended.map((e) => e.id));
    }
  }

  async function finishEach(ids: string[]): Promise<number> {
    let told = 0;
    for (const id of ids) {
      const done = await db.transaction().execute(async (trx) => {
        const c = await trx
          .updateTable('challenges')
          .set({ finished_event_at: now() })
          .where('id', '=', id)
          .where('finished_event_at', 'is', null)
          .returning(['creator_id', 'community_id', 'name', 'metric', 'starts_at', 'ends_at', 'participants_count'])
          .executeTakeFirst();
        if (!c) return false;
        const { rows } = await sql<{ member_id: string; score: string; rank: string }>`
          select member_id, score, row_number() over (order by score desc, reached_at, member_id) as rank
          from challenge_participants where challenge_id = ${id}
          order by score desc, reached_at, member_id limit ${FINISHED_RANKING_MAX}`.execute(trx);
        await recordEvents(trx, c.creator_id, [
          {
            type: 'challenge.finished',
            data: {
              challenge_id: id,
              community_id: c.community_id,
              name: c.name,
              metric: c.metric,
              starts_at: new Date(c.starts_at).toISOString(),
              ends_at: new Date(c.ends_at).toISOString(),
              participants_count: c.participants_count,
              ranking: rows.map((r) => ({ rank: Number(r.rank), member_id: r.member_id, score: Number(r.score) })),
            },
          },
        ]);
        return true;
      });
      if (done) told++;
    }
    return told;
  }

  return {
    /** challenge.finished for the challenges that have ended (the standings job runs it after run()). */
    finishEnded,

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
