import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/tx.js';

/**
 * Member activity (DESIGN §7: a workout logged, a comment, kudos, a poll vote, a post view),
 * kept per creator × member as member_activity.last_active_at (a narrow table of its own,
 * migrations/0032, so an activity never rewrites the wide, many-indexed directory row): what
 * the directory sorts by and what makes a member at risk after 14 quiet days.
 *
 * Written at most once an hour per creator and member: an activity within the hour after
 * the recorded one changes nothing, so a member's busy session costs one row write, and the
 * workout-logging statement pays an index probe, not an update, for almost every log.
 * `last_active_at` is therefore exact to within an hour (never later than the truth).
 */
export const ACTIVITY_RESOLUTION_SQL = `interval '1 hour'`;

/** The condition under which an activity at `at` is written over `lastActiveAt` (SQL text, for statements that inline it). */
export const activityIsNewer = (lastActiveAt: string, at: string): string =>
  `(${lastActiveAt} is null or ${lastActiveAt} < ${at} - ${ACTIVITY_RESOLUTION_SQL})`;

/**
 * The update that records the activities `rows` yields (columns creator_id, member_id, at;
 * one row per creator and member): a statement alone, or a data-modifying CTE of a batch
 * statement (the post views). A member with no subscription to the creator has no row and
 * nothing is recorded.
 */
export const recordActivities = (rows: RawBuilder<unknown>) => sql`update member_activity m set last_active_at = x.at
  from (${rows}) x
  where m.creator_id = x.creator_id and m.member_id = x.member_id and ${sql.raw(activityIsNewer('m.last_active_at', 'x.at'))}`;

export function createActivityRepo() {
  return {
    /** Records the member's activity in this creator's communities at `at`: the one function every kind of activity calls. */
    async record(creatorId: string, memberId: string, at: Date, trx: Executor) {
      await recordActivities(sql`select ${creatorId}::uuid as creator_id, ${memberId}::uuid as member_id, ${at}::timestamptz as at`).execute(trx);
    },
  };
}

export type ActivityRepo = ReturnType<typeof createActivityRepo>;
