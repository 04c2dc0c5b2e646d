import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';

export interface CommentRow {
  id: string;
  post_id: string;
  member_id: string;
  author_name: string;
  body: string;
  created_at: Date;
}

/**
 * Members' engagement with posts. Every write moves its count in post_counts in the same
 * transaction (an `update ... set n = n ± 1` takes the row lock, so concurrent writers
 * serialise on it and the count stays exact); a write that changed nothing moves nothing.
 */
export function createEngagementRepo(db: Db) {
  const bump = (postId: string, column: 'kudos_count' | 'comments_count', by: 1 | -1, trx: Executor) =>
    sql`update post_counts set ${sql.ref(column)} = ${sql.ref(column)} + ${by} where post_id = ${postId}`.execute(trx);

  return {
    /**
     * Locks the post's count row: the one lock every write to a post's engagement or poll
     * takes first (kudos, comments, votes, the creator's edit), so they queue on one row in
     * one order and never deadlock; what they read after it is current.
     */
    async lockCounts(postId: string, trx: Executor) {
      await sql`select 1 from post_counts where post_id = ${postId} for update`.execute(trx);
    },

    /** Gives kudos; false (and no count moved) when the member already had. */
    async addKudos(creatorId: string, postId: string, memberId: string, at: Date, trx: Executor) {
      const row = await trx
        .insertInto('post_kudos')
        .values({ post_id: postId, member_id: memberId, creator_id: creatorId, created_at: at })
        .onConflict((oc) => oc.columns(['post_id', 'member_id']).doNothing())
        .returning('post_id')
        .executeTakeFirst();
      if (row) await bump(postId, 'kudos_count', 1, trx);
      return row !== undefined;
    },

    async removeKudos(postId: string, memberId: string, trx: Executor) {
      const row = await trx.deleteFrom('post_kudos').where('post_id', '=', postId).where('member_id', '=', memberId).returning('post_id').executeTakeFirst();
      if (row) await bump(postId, 'kudos_count', -1, trx);
      return row !== undefined;
    },

    async kudosCount(postId: string, trx: Executor) {
      return (await trx.selectFrom('post_counts').select('kudos_count').where('post_id', '=', postId).executeTakeFirstOrThrow()).kudos_count;
    },

    async addComment(c: { id: string; creatorId: string; postId: string; memberId: string; body: string; at: Date }, trx: Executor) {
      await trx.insertInto('post_comments').values({ id: c.id, post_id: c.postId, creator_id: c.creatorId, member_id: c.memberId, body: c.body, created_at: c.at }).execute();
      await bump(c.postId, 'comments_count', 1, trx);
    },

    /** Deletes a comment of the post (only the member's own when `memberId` is given); false if there was none. */
    async removeComment(postId: string, commentId: string, memberId: string | undefined, trx: Executor) {
      let q = trx.deleteFrom('post_comments').where('post_id', '=', postId).where('id', '=', commentId);
      if (memberId) q = q.where('member_id', '=', memberId);
      const row = await q.returning('id').executeTakeFirst();
      if (row) await bump(postId, 'comments_count', -1, trx);
      return row !== undefined;
    },

    async findComment(postId: string, commentId: string, trx: Executor = db) {
      return trx.selectFrom('post_comments').select(['id', 'member_id']).where('post_id', '=', postId).where('id', '=', commentId).executeTakeFirst();
    },

    /** A page of the post's comments, oldest first (ties by id), with their authors' names. */
    async comments(postId: string, offset: number, limit: number, trx: Executor = db) {
      const { rows } = await sql<CommentRow>`select c.id, c.post_id, c.member_id, m.name as author_name, c.body, c.created_at
        from post_comments c join members m on m.id = c.member_id
        where c.post_id = ${postId} order by c.created_at, c.id offset ${offset} limit ${limit}`.execute(trx);
      return rows;
    },

    async comment(postId: string, commentId: string, trx: Executor = db) {
      const { rows } = await sql<CommentRow>`select c.id, c.post_id, c.member_id, m.name as author_name, c.body, c.created_at
        from post_comments c join members m on m.id = c.member_id where c.post_id = ${postId} and c.id = ${commentId}`.execute(trx);
      return rows[0];
    },

    /**
     * Replaces the member's choices in the post's poll and moves the option counts by the
     * difference. The caller holds the post's count row (findForMember lock), so two votes
     * of one member never interleave.
     */
    async replaceVotes(creatorId: string, postId: string, memberId: string, options: number[], at: Date, trx: Executor) {
      const before = await trx.deleteFrom('poll_votes').where('post_id', '=', postId).where('member_id', '=', memberId).returning('option').execute();
      await trx
        .insertInto('poll_votes')
        .values(options.map((option) => ({ post_id: postId, member_id: memberId, option, creator_id: creatorId, created_at: at })))
        .execute();
      const removed = before.map((r) => r.option);
      await sql`update post_counts set
          poll_votes = (select array_agg(n + (case when i - 1 = any(${options}::int[]) then 1 else 0 end)
                                           - (case when i - 1 = any(${removed}::int[]) then 1 else 0 end) order by i)
                        from unnest(poll_votes) with ordinality as x(n, i)),
          poll_voters = poll_voters + ${removed.length === 0 ? 1 : 0}
        where post_id = ${postId}`.execute(trx);
    },
  };
}

export type EngagementRepo = ReturnType<typeof createEngagementRepo>;
