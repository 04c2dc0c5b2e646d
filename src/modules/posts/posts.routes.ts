import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { answerInTransaction, sendData } from '../../http/idempotency.js';
import { authErrors, conflictError, IdParams, notFoundError, Ok, OkList } from '../../http/schemas.js';
import { Comment, CommentsQuery, CreatePostBody, DeletedComment, DeletedPost, ListPostsQuery, Post, PostCommentParams, UpdatePostBody } from './posts.schemas.js';
import type { PostsService } from './posts.service.js';

const tags = ['Posts'];
/** Every POST takes an Idempotency-Key (openapi.ts): the same key with another body is 409. */
const keyReused = conflictError('`idempotency_key_reused`: this Idempotency-Key was already used with another request.');

export const PAYWALL_RULE =
  'Members read a post in full when it is public (`tier_min_id` null) or when they hold a live subscription (trialing, active — including one set to cancel at period end, until the period ends — or past due while the processor retries) in its community to a tier that equals or exceeds `tier_min_id` in the tier order. Everyone else gets it locked: a plain-text `preview` (the creator’s own as written, or at most the first third of the text and 140 characters, cut at a word, or null under 60 characters), the cheapest active tier that unlocks it (`upgrade_tier_id`, its name, price and billing period), how many attachments it has, whether it has a poll, and its counts — never its content, HTML, media addresses, poll question, options or results.';

/** The creator's posts: the community feed they write, and moderation of its comments. */
export function postsRoutes(service: PostsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/posts',
      {
        schema: {
          tags,
          summary: 'Create a post',
          description: `Publishes a post in one of your communities (404 if not yours). \`content\` is light markdown (1 to 4,000 characters, counted as code points after NFC normalisation), stored as written and rendered to sanitised \`content_html\`. \`media\`: up to 10 \`https\` attachments on public hosts. \`poll\`: an optional poll of 2 to 10 options. ${PAYWALL_RULE} Every problem is reported at once (400, \`details\` names each field). Send an \`Idempotency-Key\` to make retries safe.`,
          body: CreatePostBody,
          response: { 201: Ok(Type.Ref(Post)), ...authErrors, ...notFoundError, ...keyReused },
        },
      },
      async (request, reply) => sendData(request, reply, await service.create(creatorOf(request), request.body, answerInTransaction(request, reply.code(201)))),
    );

    app.get(
      '/posts',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: 'List posts',
          description:
            'Your posts, pinned first, then newest (ties by id), with `kudos_count`, `comments_count`, `views_count` and poll results. Filter by `community_id` (404 if not yours), `pinned` and `tier_min_id`. Deleted posts are not listed.',
          querystring: ListPostsQuery,
          response: { 200: OkList(Type.Ref(Post)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.get(
      '/posts/:id',
      {
        schema: {
          tags,
          summary: 'Get a post',
          description: "The post with its counts and poll results. A deleted post, or another creator's, is 404.",
          params: IdParams,
          response: { 200: Ok(Type.Ref(Post)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request), request.params.id) }),
    );

    app.patch(
      '/posts/:id',
      {
        schema: {
          tags,
          summary: 'Edit a post',
          description:
            'Changes the fields sent, validated as on create; the community cannot change. Raising `tier_min_id` locks the post at once for members below it. Once anyone has voted, the poll keeps its options and choice mode and cannot be removed (409); its question and closing time can still change. An empty body changes nothing.',
          params: IdParams,
          body: UpdatePostBody,
          response: { 200: Ok(Type.Ref(Post)), ...authErrors, ...notFoundError, ...conflictError('The poll has votes: its options, choice mode and existence are fixed.') },
        },
      },
      async (request) => ({ success: true as const, data: await service.update(creatorOf(request), request.params.id, request.body) }),
    );

    app.delete(
      '/posts/:id',
      {
        schema: {
          tags,
          summary: 'Delete a post',
          description:
            'Removes the post from every feed at once; its kudos, comments, views and votes stop counting anywhere. It cannot be brought back; deleting it again is 404.',
          params: IdParams,
          response: { 200: Ok(DeletedPost), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.remove(creatorOf(request), request.params.id) }),
    );

    app.get(
      '/posts/:id/comments',
      {
        schema: {
          tags,
          summary: "List a post's comments",
          description: "The post's comments, oldest first (ties by id), with each author's member id and full name.",
          params: IdParams,
          querystring: CommentsQuery,
          response: { 200: OkList(Type.Ref(Comment)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => service.comments(creatorOf(request), request.params.id, request.query),
    );

    app.delete(
      '/posts/:id/comments/:comment_id',
      {
        schema: {
          tags,
          summary: 'Delete a comment',
          description: 'Removes any comment on your post (moderation); the post’s `comments_count` drops with it. An unknown comment, or one of another post, is 404.',
          params: PostCommentParams,
          response: { 200: Ok(DeletedComment), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.removeComment(creatorOf(request), request.params.id, request.params.comment_id) }),
    );
  };
}
