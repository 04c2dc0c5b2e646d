import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';
import type { MediaItem } from '../../db/types.js';
import { LIVE_STATUSES } from '../programs/access.js';
import type { AccessTier } from './paywall.js';
import type { PostRow } from './present.js';
import { viewWrites } from './views.js';
import { compiledQueries } from '../../db/compiled.js';
import { opaqueArray, pageWindow, plannedOnce } from '../../db/prepared.js';

export interface PostWrite {
  content: string;
  content_html: string;
  preview: string | null;
  /** Computed by the current rule (content.ts previewOf): writing it clears the stale flag. */
  preview_auto: string | null;
  tier_min_id: string | null;
  media: MediaItem[];
  pinned: boolean;
  poll_question: string | null;
  poll_options: string[] | null;
  poll_multiple: boolean | null;
  poll_closes_at: Date | null;
}

export interface PostFilter {
  communityId?: string;
  pinned?: boolean;
  tierMinId?: string;
}

/** The member's standing in a community, as the paywall and the feed's visibility need it. */
export interface AccessRow {
  community_id: string;
  creator_id: string;
  /** The community is public and active: anyone may read its feed (public posts in full, the rest as teasers). */
  open: boolean;
  /** The member holds or held a subscription there. */
  subscribed: boolean;
  live_tier_ids: string[];
  tiers: Array<Omit<AccessTier, 'created_at'> & { created_at: string }>;
}

/** The live statuses (DESIGN §7) as SQL literals, so the partial index on them stays usable. */
const LIVE = sql.join(LIVE_STATUSES.map((s) => sql.lit(s)));

/** Feed order: pinned first, then newest (ties by id), as posts_*_feed_idx store it. */
const FEED_ORDER = sql`p.pinned desc, p.created_at desc, p.id desc`;

/**
 * A post with its counts: `select ${POST_COLUMNS} from posts p join post_counts pc ...`.
 * Named, not `p.*`: the member reads are prepared statements (db/prepared.ts).
 */
const POST_COLUMNS = sql`p.id, p.creator_id, p.community_id, p.content, p.content_html, p.preview, p.preview_auto, p.preview_auto_stale, p.tier_min_id, p.media,
  p.pinned, p.poll_question, p.poll_options, p.poll_multiple, p.poll_closes_at, p.created_at, p.updated_at, p.deleted_at,
  pc.kudos_count, pc.comments_count, pc.views_count, pc.poll_votes, pc.poll_voters`;

/** A member's own engagement with post `p`: their kudos and poll choices (`memberId`: a value, or a column). */
const own = (memberId: unknown) => sql`exists (select 1 from post_kudos k where k.post_id = p.id and k.member_id = ${memberId}) as kudoed,
  array(select v.option::int from poll_votes v where v.post_id = p.id and v.member_id = ${memberId} order by v.option) as my_votes`;

/** The columns of AccessRow for community `c` (but its ids, which a post row carries too); `memberId` a value, or a column. */
const accessColumns = (memberId: unknown) => sql`(c.is_public and c.status = 'active') as open,
  exists (select 1 from subscriptions s where s.member_id = ${memberId} and s.community_id = c.id) as subscribed,
  array(select s.tier_id from subscriptions s where s.member_id = ${memberId} and s.community_id = c.id and s.status in (${LIVE})) as live_tier_ids,
  coalesce((select json_agg(json_build_object('id', t.id, 'name', t.name, 'price_cents', t.price_cents, 'billing_period', t.billing_period,
                                              'level', t.level, 'created_at', t.created_at, 'is_active', t.is_active))
            from tiers t where t.community_id = c.id), '[]') as tiers`;

export type MemberPostRow = PostRow & AccessRow & { kudoed: boolean; my_votes: number[] };
/** An opened post (openForMembers): `counted` is whether the member's view was new today. */
export type OpenedPostRow = MemberPostRow & { counted: boolean };
/** A community of the feed: its paywall input and its posts not deleted (the feed's total is their sum, read in the same statement). */
export type FeedAccessRow = AccessRow & { posts_count: number };

const memberReads = compiledQueries('member', { prepare: true });

export function createPostsRepo(db: Db) {
  const where = (creatorId: string, f: PostFilter) => sql`p.creator_id = ${creatorId} and p.deleted_at is null
    and (${f.communityId ?? null}::uuid is null or p.community_id = ${f.communityId ?? null}::uuid)
    and (${f.pinned ?? null}::boolean is null or p.pinned = ${f.pinned ?? null}::boolean)
    and (${f.tierMinId ?? null}::uuid is null or p.tier_min_id = ${f.tierMinId ?? null}::uuid)`;

  return {
    async insert(creatorId: string, row: PostWrite & { id: string; community_id: string; at: Date }, trx: Executor) {
      const { at, media, ...fields } = row;
      await trx
        .insertInto('posts')
        // The preview in `fields` is computed by the current rule (the column defaults to stale, migration 0019).
        .values({ ...fields, preview_auto_stale: false, creator_id: creatorId, media: JSON.stringify(media), created_at: at, updated_at: at })
        .execute();
      await trx
        .insertInto('post_counts')
        .values({ post_id: row.id, creator_id: creatorId, poll_votes: row.poll_options ? row.poll_options.map(() => 0) : null })
        .execute();
      await sql`update communities set posts_count = posts_count + 1 where id = ${row.community_id}`.execute(trx);
    },

    async update(creatorId: string, id: string, row: PostWrite & { at: Date; resetVotes: boolean }, trx: Executor) {
      const { at, media, resetVotes, ...fields } = row;
      await trx
        .updateTable('posts')
        .set({ ...fields, preview_auto_stale: false, media: JSON.stringify(media), updated_at: at })
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .execute();
      if (resetVotes) {
        await trx.deleteFrom('poll_votes').where('post_id', '=', id).execute();
        await trx
          .updateTable('post_counts')
          .set({ poll_votes: row.poll_options ? row.poll_options.map(() => 0) : null, poll_voters: 0 })
          .where('post_id', '=', id)
          .execute();
      }
    },

    /** Marks the post deleted (it leaves every feed); false if it was already gone. */
    async remove(creatorId: string, id: string, at: Date, trx: Executor) {
      const row = await trx
        .updateTable('posts')
        .set({ deleted_at: at })
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returning('community_id')
        .executeTakeFirst();
      if (row) await sql`update communities set posts_count = posts_count - 1 where id = ${row.community_id}`.execute(trx);
      return row !== undefined;
    },

    /** One of the creator's posts, not deleted. */
    async find(creatorId: string, id: string, trx: Executor = db) {
      const { rows } = await sql<PostRow>`select ${POST_COLUMNS} from posts p join post_counts pc on pc.post_id = p.id
        where p.creator_id = ${creatorId} and p.id = ${id} and p.deleted_at is null`.execute(trx);
      return rows[0];
    },

    async list(creatorId: string, f: PostFilter & { offset: number; limit: number }, trx: Executor = db) {
      const { rows } = await sql<PostRow>`select ${POST_COLUMNS} from posts p join post_counts pc on pc.post_id = p.id
        where ${where(creatorId, f)} order by ${FEED_ORDER} offset ${f.offset} limit ${f.limit}`.execute(trx);
      return rows;
    },

    /** Posts matching the filter: the communities' counters unless the filter needs a count. */
    async count(creatorId: string, f: PostFilter, trx: Executor = db) {
      const counted =
        f.pinned === undefined && f.tierMinId === undefined
          ? sql<{ n: number }>`select coalesce(sum(posts_count), 0)::int as n from communities
              where creator_id = ${creatorId} and (${f.communityId ?? null}::uuid is null or id = ${f.communityId ?? null}::uuid)`
          : sql<{ n: number }>`select count(*)::int as n from posts p where ${where(creatorId, f)}`;
      return (await counted.execute(trx)).rows[0]!.n;
    },

    /**
     * Up to `limit` posts (of any creator: a maintenance pass, not a tenant's read) whose
     * automatic preview was computed by an earlier rule, locked so that another node's pass
     * skips them and a creator's edit waits: what is written back was computed from the
     * content as it is. Deleted posts too, so the pass ends and nothing stale is left behind.
     */
    async stalePreviews(limit: number, trx: Executor) {
      const { rows } = await sql<{ id: string; content: string }>`select id, content from posts where preview_auto_stale
        order by id limit ${limit} for update skip locked`.execute(trx);
      return rows;
    },

    async setAutoPreviews(previews: Array<{ id: string; preview: string | null }>, trx: Executor) {
      if (previews.length === 0) return;
      await sql`update posts p set preview_auto = v.preview, preview_auto_stale = false
        from unnest(${previews.map((p) => p.id)}::uuid[], ${previews.map((p) => p.preview)}::text[]) as v(id, preview)
        where p.id = v.id`.execute(trx);
    },

    /** Whether the tier is one of the community's (any status). */
    async tierOf(creatorId: string, communityId: string, tierId: string, trx: Executor) {
      return trx.selectFrom('tiers').select('id').where('creator_id', '=', creatorId).where('community_id', '=', communityId).where('id', '=', tierId).executeTakeFirst();
    },

    /**
     * The member's standing in these communities, or (no ids) in every community they hold
     * or held a subscription in: one statement, the paywall's whole input.
     */
    async access(memberId: string, communityIds: string[] | undefined, trx: Executor = db) {
      const query = communityIds
        ? sql<FeedAccessRow>`/*prepare:feed_access*/ select c.id as community_id, c.creator_id, c.posts_count, ${accessColumns(memberId)}
            from communities c where c.id = any(${opaqueArray(communityIds, 'uuid')})`
        : sql<FeedAccessRow>`/*prepare:feed_access_all*/ select c.id as community_id, c.creator_id, c.posts_count, ${accessColumns(memberId)}
            from communities c where c.id in (select s.community_id from subscriptions s where s.member_id = ${memberId})`;
      return (await query.execute(trx)).rows;
    },

    /**
     * A page of the feed of these communities. Each community's posts are walked on its
     * feed index up to the page's end and merged, so a page costs its depth per community,
     * not the communities' whole history.
     */
    async feed(memberId: string, communityIds: string[], offset: number, limit: number, trx: Executor = db) {
      if (communityIds.length === 0) return [];
      // The merge carries only the order's columns (an index-only walk of each community's
      // feed index); the page's 50 rows are read whole after it, not the depth before it.
      // A first page of a common size is one generic plan (pageWindow, opaqueArray): planning
      // it at every bind cost 0.4 ms of PostgreSQL, about as long as running it.
      const depth = plannedOnce(offset, limit) ? sql.lit(limit) : sql`${offset + limit}`;
      const { rows } = await sql<PostRow & { kudoed: boolean; my_votes: number[] }>`/*prepare:member_feed*/
        select ${POST_COLUMNS}, ${own(memberId)}
        from (select f.id from unnest(${opaqueArray(communityIds, 'uuid')}) as c(id)
              cross join lateral (select p.id, p.pinned, p.created_at from posts p where p.community_id = c.id and p.deleted_at is null
                                  order by ${FEED_ORDER} limit ${depth}) f
              order by f.pinned desc, f.created_at desc, f.id desc ${pageWindow(offset, limit)}) k
        join posts p on p.id = k.id
        join post_counts pc on pc.post_id = p.id
        order by ${FEED_ORDER}`.execute(trx);
      return rows;
    },

    /** A post not deleted, with its counts, the member's own engagement and the paywall's input for its community: one statement. */
    async findForMember(memberId: string, id: string, trx: Executor = db) {
      // Compiled once (db/compiled.ts): every opened post asks this.
      const rows = await memberReads.rows(trx, 'post', [memberId, id], (m, i) =>
        sql<MemberPostRow>`select ${POST_COLUMNS}, ${own(m)}, ${accessColumns(m)}
          from posts p join post_counts pc on pc.post_id = p.id join communities c on c.id = p.community_id
          where p.id = ${i} and p.deleted_at is null`,
      );
      return rows[0];
    },

    /**
     * Posts opened together (member-posts.service.ts combines them), each with its view counted:
     * one statement reads every post as findForMember does and writes the views of the posts
     * their member may see (views.ts), so an opened post costs one statement, not a read and a
     * write. One answer per item in order (undefined: no such post); `counted` says whether the
     * view was new today (the read's views_count is from before it). Items must not repeat a member.
     */
    async openForMembers(items: ReadonlyArray<{ memberId: string; id: string; at: Date }>, trx: Executor = db): Promise<Array<OpenedPostRow | undefined>> {
      const rows = await memberReads.rows(
        trx,
        'opened',
        [items.map((r) => r.memberId), items.map((r) => r.id), items.map((r) => r.at.toISOString())],
        (m, i, at) =>
          sql<OpenedPostRow & { n: number }>`with r as (
            select q.n::int as n, q.member_id as reader_id, q.at as opened_at, ${POST_COLUMNS}, ${own(sql.ref('q.member_id'))}, ${accessColumns(sql.ref('q.member_id'))}
            from unnest(${opaqueArray(m, 'uuid')}, ${opaqueArray(i, 'uuid')}, ${opaqueArray(at, 'timestamptz')}) with ordinality as q(member_id, post_id, at, n)
            join posts p on p.id = q.post_id join post_counts pc on pc.post_id = p.id join communities c on c.id = p.community_id
            where p.deleted_at is null
          ),
          -- A view counts where the member may see the post at all (its feed is open to them): the same rule as the 404.
          v as (
            select distinct on (member_id, post_id, day) id as post_id, reader_id as member_id, creator_id, (opened_at at time zone 'UTC')::date as day, opened_at as at
            from r where open or subscribed order by member_id, post_id, day
          ),
          ${viewWrites()}
          select r.*, exists (select 1 from added a where a.post_id = r.id and a.member_id = r.reader_id) as counted from r`,
      );
      const byPlace = new Map(rows.map(({ n, ...row }) => [n, row as OpenedPostRow]));
      return items.map((_, place) => byPlace.get(place + 1));
    },
  };
}

export type PostsRepo = ReturnType<typeof createPostsRepo>;
