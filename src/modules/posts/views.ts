import { sql } from 'kysely';
import { createCombiner } from '../../db/combiner.js';
import type { Db } from '../../db/client.js';
import { opaqueArray } from '../../db/prepared.js';
import { recordActivities } from '../activity/activity.js';

export interface View {
  postId: string;
  memberId: string;
  creatorId: string;
  at: Date;
}

/**
 * Post views, group-committed like workout logs (db/combiner.ts): views arriving together
 * are one statement that inserts them (the primary key keeps one per member, post and UTC
 * day), moves each post's count once by the number of new views, and records the members'
 * activity. A popular post therefore takes one counter update per batch, not one per reader.
 * One member's views never share a batch (the combiner's key), and the count rows are
 * locked in post order, so concurrent batches never deadlock on them.
 *
 * Answers, per view, whether it was new today (the caller adds it to the count it shows).
 */
export function createViewRecorder(db: Db, opts: { onBatch?: (size: number) => void } = {}) {
  async function run(batch: View[]): Promise<boolean[]> {
    // In (member, post) order, so batches of several nodes take their row locks in one order.
    const views = [...batch].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : a.postId < b.postId ? -1 : a.postId > b.postId ? 1 : 0));
    const days = views.map((v) => v.at.toISOString().slice(0, 10));
    // Prepared (db/prepared.ts): planning this statement cost more than running it. Its lists
    // are opaque to the planner, else a batch's known size kept it from the generic plan.
    const { rows } = await sql<{ post_id: string; member_id: string }>`/*prepare:post_views*/
      with v as (
        select distinct on (post_id, member_id, day) post_id, member_id, creator_id, day, at
        from unnest(${opaqueArray(views.map((v) => v.postId), 'uuid')}, ${opaqueArray(views.map((v) => v.memberId), 'uuid')},
                    ${opaqueArray(views.map((v) => v.creatorId), 'uuid')}, ${opaqueArray(days, 'date')},
                    ${opaqueArray(views.map((v) => v.at.toISOString()), 'timestamptz')}) as v(post_id, member_id, creator_id, day, at)
      ),
      added as (
        insert into post_views (post_id, member_id, day, creator_id) select post_id, member_id, day, creator_id from v
        on conflict do nothing returning post_id, member_id
      ),
      locked as (select pc.post_id from post_counts pc where pc.post_id in (select post_id from added) order by pc.post_id for update),
      counted as (
        update post_counts pc set views_count = pc.views_count + n.n
        from (select post_id, count(*) as n from added group by post_id) n
        where pc.post_id = n.post_id and pc.post_id in (select post_id from locked)
      ),
      active as (${recordActivities(sql`select distinct on (creator_id, member_id) creator_id, member_id, at from v order by creator_id, member_id, at desc`)})
      select post_id, member_id from added`.execute(db);
    const added = new Set(rows.map((r) => `${r.post_id} ${r.member_id}`));
    return batch.map((v) => added.has(`${v.postId} ${v.memberId}`));
  }

  const combiner = createCombiner({ run, key: (v: View) => v.memberId, maxBatch: 64, maxInFlight: 2, onBatch: opts.onBatch });
  return { record: (view: View) => combiner.submit(view) };
}

export type ViewRecorder = ReturnType<typeof createViewRecorder>;
