import { sql } from 'kysely';
import { recordActivities } from '../activity/activity.js';

/**
 * Post views (docs/decisions/durable-post-views.md): a view is a row of post_views, one per
 * member, post and UTC day. They are written by the statement that reads the opened posts
 * (posts.repo.ts openForMembers, group-committed in member-posts.service.ts): one statement a
 * batch inserts its views, moves each post's count once by its number of new views, and records
 * the members' activity. A popular post therefore takes one counter update per batch, not one
 * per reader. One member's reads never share a batch (the combiner's key), and the count rows
 * are locked in post order, so concurrent batches never deadlock on them.
 *
 * The CTEs after a CTE `v` (post_id, member_id, creator_id, day, at) of the statement, in
 * (member, post) order so batches of several nodes take their row locks in one order. `added`
 * (post_id, member_id) holds the views that were new today.
 */
export const viewWrites = () => sql`added as (
        insert into post_views (post_id, member_id, day, creator_id) select post_id, member_id, day, creator_id from v
        on conflict do nothing returning post_id, member_id
      ),
      locked as (select pc.post_id from post_counts pc where pc.post_id in (select post_id from added) order by pc.post_id for update),
      counted as (
        update post_counts pc set views_count = pc.views_count + n.n
        from (select post_id, count(*) as n from added group by post_id) n
        where pc.post_id = n.post_id and pc.post_id in (select post_id from locked)
      ),
      active as (${recordActivities(sql`select distinct on (creator_id, member_id) creator_id, member_id, at from v order by creator_id, member_id, at desc`)})`;
