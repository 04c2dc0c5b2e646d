import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, type Executor, type StoredAnswer } from '../../db/tx.js';
import { AppError, notFound, type ErrorDetail } from '../../http/errors.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { CommunitiesRepo } from '../communities/communities.repo.js';
import { characterCount, isBlank, mediaUrlProblem, POST_CONTENT_MAX, previewOf, renderedSizeProblem, renderMarkdown } from './content.js';
import type { CommentRow, EngagementRepo } from './engagement.repo.js';
import { teaserOf } from './paywall.js';
import type { PostsRepo, PostWrite } from './posts.repo.js';
import { POLL, PREVIEW_MAX, type CreatePostBody, type ListPostsQuery, type PollInput, type UpdatePostBody } from './posts.schemas.js';
import { countsOf, pollOf, type PostRow } from './present.js';
import { recordEvents } from '../events/outbox.js';

export interface PostsDeps {
  db: Db;
  posts: PostsRepo;
  engagement: EngagementRepo;
  communities: CommunitiesRepo;
  now: () => Date;
}

/** The whole post, as its creator sees it, with the teaser members without access read (paywall.ts). */
export function presentPost(p: PostRow, now: Date) {
  return {
    id: p.id,
    community_id: p.community_id,
    content: p.content,
    content_html: p.content_html,
    preview: teaserOf(p),
    preview_is_custom: p.preview !== null,
    tier_min_id: p.tier_min_id,
    media: p.media,
    pinned: p.pinned,
    poll: pollOf(p, now),
    ...countsOf(p),
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

export type PostView = ReturnType<typeof presentPost>;

/**
 * Stale automatic previews recomputed per transaction (refreshStalePreviews): ~0.4 ms each for
 * a 4,000-character post, so a batch holds its row locks, and the event loop, for ~40 ms at most.
 */
const PREVIEW_BATCH = 100;

/** A text's problem against a length in characters (code points after NFC), or none. */
function textProblem(field: string, text: string, max: number): ErrorDetail | undefined {
  if (isBlank(text)) return { field, message: 'must not be blank' };
  const n = characterCount(text);
  if (n > max) return { field, message: `must be at most ${max} characters (this one has ${n})` };
  return undefined;
}

/**
 * Every problem of a post's fields at once (400), checked beyond what the schema can say.
 * `html` is the content's rendering, weighed once the content itself is valid.
 */
function problemsOf(input: Partial<CreatePostBody>, html: string | undefined, now: Date, storedClosesAt: Date | null): ErrorDetail[] {
  const problems: Array<ErrorDetail | undefined> = [];
  if (input.content !== undefined) {
    const problem = textProblem('content', input.content, POST_CONTENT_MAX);
    const tooHeavy = problem || html === undefined ? undefined : renderedSizeProblem(html);
    problems.push(problem ?? (tooHeavy ? { field: 'content', message: tooHeavy } : undefined));
  }
  if (input.preview) problems.push(textProblem('preview', input.preview, PREVIEW_MAX));
  input.media?.forEach((m, i) => {
    const problem = mediaUrlProblem(m.url);
    if (problem) problems.push({ field: `media.${i}.url`, message: problem });
  });
  const poll = input.poll;
  if (poll) {
    problems.push(textProblem('poll.question', poll.question, POLL.questionMax));
    poll.options.forEach((o, i) => problems.push(textProblem(`poll.options.${i}`, o, POLL.optionMax)));
    const keys = poll.options.map((o) => o.normalize('NFC').trim().toLowerCase());
    if (new Set(keys).size !== keys.length) problems.push({ field: 'poll.options', message: 'must be distinct (ignoring case and surrounding spaces)' });
    const closesAt = poll.closes_at ? new Date(poll.closes_at) : null;
    // Sending back the stored closing time unchanged is not a change, even once it has passed.
    if (closesAt && closesAt <= now && closesAt.getTime() !== storedClosesAt?.getTime()) problems.push({ field: 'poll.closes_at', message: 'must be in the future' });
  }
  return problems.filter((p): p is ErrorDetail => p !== undefined);
}

/** A poll's columns; an edit (`stored`: the post as it is) keeps the choice mode and closing time it does not send. */
function pollColumns(poll: PollInput | null | undefined, stored?: PostRow) {
  if (!poll) return { poll_question: null, poll_options: null, poll_multiple: null, poll_closes_at: null };
  const closesAt = poll.closes_at === undefined ? (stored?.poll_closes_at ?? null) : poll.closes_at;
  return {
    poll_question: poll.question,
    poll_options: poll.options,
    poll_multiple: poll.multiple_choice ?? stored?.poll_multiple ?? false,
    poll_closes_at: closesAt === null ? null : new Date(closesAt),
  };
}

/** Media as the URL parser reads them (what a browser will fetch), not as typed: checked and stored are the same address. */
const parsedMedia = (media: CreatePostBody['media']) => (media ?? []).map((m) => ({ type: m.type, url: new URL(m.url).href }));

const sameOptions = (a: string[] | null, b: string[] | null) => JSON.stringify(a) === JSON.stringify(b);

export const presentComment = (c: CommentRow) => ({ id: c.id, post_id: c.post_id, member_id: c.member_id, author_name: c.author_name, body: c.body, created_at: iso(c.created_at) });

/** The creator's side of the feed: writing, editing, listing and deleting posts, and moderating comments. */
export function createPostsService({ db, posts, engagement, communities, now }: PostsDeps) {
  async function load(creatorId: string, id: string, trx: Executor = db): Promise<PostRow> {
    const row = await posts.find(creatorId, id, trx);
    if (!row) throw notFound('Post');
    return row;
  }

  async function checkTier(creatorId: string, communityId: string, tierMinId: string | null | undefined, trx: Executor) {
    if (tierMinId && !(await posts.tierOf(creatorId, communityId, tierMinId, trx))) {
      throw new AppError('validation_error', 'The post settings are not valid.', [{ field: 'tier_min_id', message: "is not a tier of the post's community" }]);
    }
  }

  function refuseProblems(problems: ErrorDetail[]) {
    if (problems.length) throw new AppError('validation_error', 'The post is not valid.', problems);
  }

  return {
    async create(creatorId: string, input: CreatePostBody, answer?: StoredAnswer<PostView>) {
      const at = now();
      const html = renderMarkdown(input.content);
      refuseProblems(problemsOf(input, html, at, null));
      const row: PostWrite & { id: string; community_id: string; at: Date } = {
        id: newId(),
        community_id: input.community_id,
        at,
        content: input.content,
        content_html: html,
        preview: input.preview ?? null,
        preview_auto: previewOf(input.content),
        tier_min_id: input.tier_min_id ?? null,
        media: parsedMedia(input.media),
        pinned: input.pinned ?? false,
        ...pollColumns(input.poll),
      };
      return inTransaction(db, answer, async (trx) => {
        if (!(await communities.findStatus(creatorId, input.community_id, trx))) throw notFound('Community');
        await checkTier(creatorId, input.community_id, row.tier_min_id, trx);
        await posts.insert(creatorId, row, trx);
        const post = presentPost(await load(creatorId, row.id, trx), at);
        await recordEvents(trx, creatorId, [
          {
            type: 'post.published',
            data: { post_id: post.id, community_id: post.community_id, tier_min_id: post.tier_min_id, preview: post.preview, pinned: post.pinned, has_poll: post.poll !== null, media_count: post.media.length, published_at: post.created_at },
          },
        ]);
        return post;
      });
    },

    async list(creatorId: string, query: ListPostsQuery) {
      if (query.community_id && !(await communities.findStatus(creatorId, query.community_id))) throw notFound('Community');
      const filter = { communityId: query.community_id, pinned: query.pinned, tierMinId: query.tier_min_id };
      const [rows, total] = await Promise.all([posts.list(creatorId, { ...filter, offset: offsetOf(query), limit: query.limit }), posts.count(creatorId, filter)]);
      const at = now();
      return paginated(
        rows.map((r) => presentPost(r, at)),
        total,
        query,
      );
    },

    async get(creatorId: string, id: string) {
      return presentPost(await load(creatorId, id), now());
    },

    /**
     * Changes the fields sent, validated as on create. Once anyone has voted, the poll's
     * options and choice mode are fixed and it cannot be removed (409): the votes refer to them.
     */
    async update(creatorId: string, id: string, input: UpdatePostBody, answer?: StoredAnswer<PostView>) {
      const at = now();
      return inTransaction(db, answer, async (trx) => {
        // The post's count row first, as every vote takes it (engagement.repo lockCounts): the
        // votes counted below are all there are until this edit commits.
        await engagement.lockCounts(id, trx);
        const post = await load(creatorId, id, trx);
        const html = input.content === undefined ? undefined : renderMarkdown(input.content);
        refuseProblems(problemsOf(input, html, at, post.poll_closes_at && new Date(post.poll_closes_at)));
        if (input.tier_min_id !== undefined) await checkTier(creatorId, post.community_id, input.tier_min_id, trx);
        const poll = input.poll === undefined ? undefined : pollColumns(input.poll, post);
        const pollChanged = poll !== undefined && (!sameOptions(poll.poll_options, post.poll_options) || poll.poll_multiple !== post.poll_multiple);
        if (pollChanged && post.poll_voters > 0) {
          throw new AppError('conflict', `${post.poll_voters} member(s) have voted in this poll; its options and choice mode can no longer change, and it cannot be removed. Its question and closing time still can.`);
        }
        const content = input.content ?? post.content;
        await posts.update(
          creatorId,
          id,
          {
            content,
            content_html: html ?? post.content_html,
            // A stale one (0019) is recomputed by any edit, as the write clears the flag.
            preview_auto: input.content === undefined && !post.preview_auto_stale ? post.preview_auto : previewOf(content),
            preview: input.preview === undefined ? post.preview : input.preview,
            tier_min_id: input.tier_min_id === undefined ? post.tier_min_id : input.tier_min_id,
            media: input.media ? parsedMedia(input.media) : post.media,
            pinned: input.pinned ?? post.pinned,
            poll_question: poll ? poll.poll_question : post.poll_question,
            poll_options: poll ? poll.poll_options : post.poll_options,
            poll_multiple: poll ? poll.poll_multiple : post.poll_multiple,
            poll_closes_at: poll ? poll.poll_closes_at : post.poll_closes_at,
            at: Object.keys(input).length ? at : post.updated_at,
            resetVotes: pollChanged,
          },
          trx,
        );
        return presentPost(await load(creatorId, id, trx), at);
      });
    },

    /** Deletes the post: it leaves every feed at once and its engagement stops counting. Deleting it again is 404. */
    async remove(creatorId: string, id: string, answer?: StoredAnswer<{ id: string; deleted: true }>) {
      return inTransaction(db, answer, async (trx) => {
        if (!(await posts.remove(creatorId, id, now(), trx))) throw notFound('Post');
        return { id, deleted: true as const };
      });
    },

    async comments(creatorId: string, id: string, query: PageQuery) {
      const post = await load(creatorId, id);
      const rows = await engagement.comments(id, offsetOf(query), query.limit);
      return paginated(rows.map(presentComment), post.comments_count, query);
    },

    /**
     * Recomputes, in batches, the automatic previews migration 0019 left stale (or a future rule
     * change flags): run at start-up. Idempotent, and safe with several nodes at once: each
     * batch skips the rows another node holds, and rows are only ever set to what the current
     * rule computes from their current content. Until a post is done, reads compute its
     * preview themselves (paywall.ts teaserOf). Stops between batches once `stop()` is true;
     * answers how many posts it recomputed.
     */
    async refreshStalePreviews(stop: () => boolean = () => false): Promise<number> {
      let done = 0;
      while (!stop()) {
        const n = await db.transaction().execute(async (trx) => {
          const stale = await posts.stalePreviews(PREVIEW_BATCH, trx);
          await posts.setAutoPreviews(
            stale.map((p) => ({ id: p.id, preview: previewOf(p.content) })),
            trx,
          );
          return stale.length;
        });
        done += n;
        if (n < PREVIEW_BATCH) break;
      }
      return done;
    },

    /** Removes any comment of the creator's post (moderation). */
    async removeComment(creatorId: string, id: string, commentId: string, answer?: StoredAnswer<{ id: string; post_id: string; deleted: true }>) {
      return inTransaction(db, answer, async (trx) => {
        await load(creatorId, id, trx);
        if (!(await engagement.removeComment(id, commentId, undefined, trx))) throw notFound('Comment');
        return { id: commentId, post_id: id, deleted: true as const };
      });
    },
  };
}

export type PostsService = ReturnType<typeof createPostsService>;
