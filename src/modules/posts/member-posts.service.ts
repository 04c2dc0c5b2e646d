import type { Db } from '../../db/client.js';
import { createCombiner } from '../../db/combiner.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, type Executor, type StoredAnswer } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { ActivityRepo } from '../activity/activity.js';
import { abbreviate } from '../members/names.js';
import { characterCount, COMMENT_MAX, isBlank } from './content.js';
import type { CommentRow, EngagementRepo } from './engagement.repo.js';
import { accessOf, presentToMember, requireFull, type MemberPostView } from './paywall.js';
import type { AccessRow, MemberPostRow, PostsRepo } from './posts.repo.js';
import type { FeedQuery } from './posts.schemas.js';
import { recordEvents } from '../events/outbox.js';

export interface MemberPostsDeps {
  db: Db;
  posts: PostsRepo;
  engagement: EngagementRepo;
  activity: ActivityRepo;
  now: () => Date;
  /** Told the size of each batch of opened posts (metrics). */
  onReadBatch?: (size: number) => void;
}

const communityAccess = (a: AccessRow) =>
  accessOf(
    a.tiers.map((t) => ({ ...t, created_at: new Date(t.created_at) })),
    a.live_tier_ids,
  );

/** A member may read a community's feed if they hold or held a subscription there, or it is public and active. */
const mayRead = (a: AccessRow) => a.subscribed || a.open;

export const presentMemberComment = (c: CommentRow, memberId: string) => ({
  id: c.id,
  post_id: c.post_id,
  member_id: c.member_id,
  author_name: abbreviate(c.author_name),
  mine: c.member_id === memberId,
  body: c.body,
  created_at: iso(c.created_at),
});

/**
 * The member app's feed. What a member is shown of a post is decided by the paywall
 * (paywall.ts) on every path; engagement needs the post readable in full (requireFull).
 */
export function createMemberPostsService({ db, posts, engagement, activity, now, onReadBatch }: MemberPostsDeps) {
  /** The post if the member may see it at all (its community's feed is open to them), else 404: a private community's posts are not revealed. */
  const seen = <R extends MemberPostRow>(row: R | undefined): R => {
    if (!row || !mayRead(row)) throw notFound('Post');
    return row;
  };
  const visible = async (memberId: string, id: string, trx: Executor = db) => seen(await posts.findForMember(memberId, id, trx));

  // Opened posts that arrive together are read, and their views written, by one statement
  // (posts.repo openForMembers, through db/combiner.ts), as their members' tokens were looked up
  // before. One member's opens never share a batch: a batch's row locks stay in one order.
  const opens = createCombiner({
    run: (items: Array<{ memberId: string; id: string; at: Date }>) => posts.openForMembers(items),
    key: (item) => item.memberId,
    maxBatch: 64,
    maxInFlight: 2,
    onBatch: onReadBatch,
  });

  /**
   * The post, locked for an engagement write (its count row), if the member takes part in
   * its community (a live subscription there: reading a public post is open to prospects,
   * talking in the community is for members) and reads it in full; else 404 or 403.
   */
  async function engageable(memberId: string, id: string, trx: Executor, opts: { lock: boolean } = { lock: true }) {
    // The count row first (engagement.repo lockCounts), then the post read after it: a
    // creator's edit of the poll that committed meanwhile is seen, never half of it.
    if (opts.lock) await engagement.lockCounts(id, trx);
    const post = await visible(memberId, id, trx);
    const access = communityAccess(post);
    requireFull(post, access);
    if (access.liveTierIds.length === 0) throw new AppError('forbidden', "Kudos, comments and votes are for the community's members: subscribe to take part.");
    return post;
  }

  const shown = (post: MemberPostRow, overrides: Partial<MemberPostRow> = {}): MemberPostView => {
    const p = { ...post, ...overrides };
    return presentToMember(p, communityAccess(p), { kudoed: p.kudoed, my_votes: p.my_votes }, now());
  };

  return {
    async feed(memberId: string, query: FeedQuery) {
      const access = (await posts.access(memberId, query.community_id ? [query.community_id] : undefined)).filter(mayRead);
      if (query.community_id && access.length === 0) throw notFound('Community');
      const byCommunity = new Map(access.map((a) => [a.community_id, communityAccess(a)]));
      const ids = [...byCommunity.keys()];
      const rows = await posts.feed(memberId, ids, offsetOf(query), query.limit);
      const total = access.reduce((n, a) => n + a.posts_count, 0);
      const at = now();
      return paginated(
        rows.map((r) => presentToMember(r, byCommunity.get(r.community_id)!, r, at)),
        total,
        query,
      );
    },

    /** One post as the paywall lets the member see it; opening it counts a view (once per UTC day) and is activity. */
    async get(memberId: string, id: string) {
      // A post the member may not see (404) was not counted either: the statement applies the same rule.
      const post = seen(await opens.submit({ memberId, id, at: now() }));
      return shown(post, post.counted ? { views_count: Number(post.views_count) + 1 } : {});
    },

    /**
     * Gives kudos once; giving it again changes nothing. `created` learns, inside the
     * transaction (before a keyed answer is stored), whether it was new: 201, or 200.
     */
    async giveKudos(memberId: string, id: string, created: (isNew: boolean) => void, answer?: StoredAnswer<{ post_id: string; kudoed: boolean; kudos_count: number }>) {
      return inTransaction(db, answer, async (trx) => {
        const post = await engageable(memberId, id, trx);
        const at = now();
        const isNew = await engagement.addKudos(post.creator_id, id, memberId, at, trx);
        if (isNew) await activity.record(post.creator_id, memberId, at, trx);
        created(isNew);
        return { post_id: id, kudoed: true, kudos_count: await engagement.kudosCount(id, trx) };
      });
    },

    async takeKudosBack(memberId: string, id: string, answer?: StoredAnswer<{ post_id: string; kudoed: boolean; kudos_count: number }>) {
      return inTransaction(db, answer, async (trx) => {
        await engageable(memberId, id, trx);
        await engagement.removeKudos(id, memberId, trx);
        return { post_id: id, kudoed: false, kudos_count: await engagement.kudosCount(id, trx) };
      });
    },

    /** The conversation is the community's: members who read the post in full (a prospect reads a public post, not what members said under it). */
    async comments(memberId: string, id: string, query: PageQuery) {
      const post = await engageable(memberId, id, db, { lock: false });
      const rows = await engagement.comments(id, offsetOf(query), query.limit);
      return paginated(
        rows.map((c) => presentMemberComment(c, memberId)),
        post.comments_count,
        query,
      );
    },

    async comment(memberId: string, id: string, body: string, answer?: StoredAnswer<ReturnType<typeof presentMemberComment>>) {
      if (isBlank(body)) throw new AppError('validation_error', 'The comment is not valid.', [{ field: 'body', message: 'must not be blank' }]);
      const n = characterCount(body);
      if (n > COMMENT_MAX) throw new AppError('validation_error', 'The comment is not valid.', [{ field: 'body', message: `must be at most ${COMMENT_MAX} characters (this one has ${n})` }]);
      return inTransaction(db, answer, async (trx) => {
        const post = await engageable(memberId, id, trx);
        const commentId = newId();
        const at = now();
        await engagement.addComment({ id: commentId, creatorId: post.creator_id, postId: id, memberId, body, at }, trx);
        await activity.record(post.creator_id, memberId, at, trx);
        await recordEvents(trx, post.creator_id, [
          { type: 'comment.created', data: { comment_id: commentId, post_id: id, community_id: post.community_id, member_id: memberId, body, created_at: at.toISOString() } },
        ]);
        return presentMemberComment((await engagement.comment(id, commentId, trx))!, memberId);
      });
    },

    /** Deletes the member's own comment; someone else's is 403. */
    async removeComment(memberId: string, id: string, commentId: string, answer?: StoredAnswer<{ id: string; post_id: string; deleted: true }>) {
      return inTransaction(db, answer, async (trx) => {
        await engagement.lockCounts(id, trx);
        await visible(memberId, id, trx);
        const comment = await engagement.findComment(id, commentId, trx);
        if (!comment) throw notFound('Comment');
        if (comment.member_id !== memberId) throw new AppError('forbidden', 'You can only delete your own comments.');
        await engagement.removeComment(id, commentId, memberId, trx);
        return { id: commentId, post_id: id, deleted: true as const };
      });
    },

    /** Votes in the post's poll, replacing earlier choices: one option unless multiple choice, not after it closes (409). */
    async vote(memberId: string, id: string, options: number[], answer?: StoredAnswer<MemberPostView>) {
      return inTransaction(db, answer, async (trx) => {
        const post = await engageable(memberId, id, trx);
        if (post.poll_options === null) throw new AppError('conflict', 'This post has no poll.');
        const at = now();
        if (post.poll_closes_at && new Date(post.poll_closes_at) <= at) throw new AppError('conflict', `The poll closed at ${iso(post.poll_closes_at)}; it no longer takes votes.`);
        const beyond = options.filter((o) => o >= post.poll_options!.length);
        if (beyond.length) {
          throw new AppError('validation_error', 'The vote is not valid.', [{ field: 'options', message: `the poll's options are 0 to ${post.poll_options.length - 1}; ${beyond.join(', ')} is not one` }]);
        }
        if (options.length > 1 && !post.poll_multiple) throw new AppError('validation_error', 'The vote is not valid.', [{ field: 'options', message: 'this poll takes one choice' }]);
        await engagement.replaceVotes(post.creator_id, id, memberId, options, at, trx);
        await activity.record(post.creator_id, memberId, at, trx);
        return shown(await visible(memberId, id, trx));
      });
    },
  };
}

export type MemberPostsService = ReturnType<typeof createMemberPostsService>;
