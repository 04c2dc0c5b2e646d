import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerInTransaction, sendData } from '../../http/idempotency.js';
import { conflictError, errorResponse, IdParams, notFoundError, Ok, OkList } from '../../http/schemas.js';
import { memberOf } from '../members/member-auth.js';
import { memberAuthErrors, memberSecurity } from '../members/members.schemas.js';
import { PAYWALL_RULE } from './posts.routes.js';
import { CommentBody, CommentsQuery, DeletedComment, FeedItem, FeedQuery, Kudos, MemberComment, PostCommentParams, VoteBody } from './posts.schemas.js';
import type { MemberPostsService } from './member-posts.service.js';

const tags = ['Member feed'];
/** Every POST takes an Idempotency-Key (openapi.ts): the same key with another body is 409. */
const keyReused = conflictError('`idempotency_key_reused`: this Idempotency-Key was already used with another request.');
const notYours = errorResponse('The post is locked for you (above your tier), or you hold no live subscription to its community: engagement is for members who read it in full.');
const postNotFound = {
  404: errorResponse("No such post, it was deleted, or its community's feed is not open to you (private, and you never subscribed)."),
};

/** The member app's feed: reading posts through the paywall, kudos, comments and poll votes. */
export function memberPostsRoutes(service: MemberPostsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/feed',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Your feed',
          description: `Posts of the communities you hold or held a subscription in (or of one \`community_id\`: yours, or any public one), pinned first, then newest (ties by id). ${PAYWALL_RULE} Each item is a \`MemberPost\` (\`locked: false\`) or a \`LockedPost\` (\`locked: true\`).`,
          querystring: FeedQuery,
          response: { 200: OkList(FeedItem), ...memberAuthErrors, ...notFoundError },
        },
      },
      async (request) => service.feed(memberOf(request), request.query),
    );

    app.get(
      '/posts/:id',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Read a post',
          description: `One post as the paywall lets you see it. Opening a post counts a view: one per member, post and UTC day, locked or not; \`views_count\` includes it. ${PAYWALL_RULE}`,
          params: IdParams,
          response: { 200: Ok(FeedItem), ...memberAuthErrors, ...postNotFound },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(memberOf(request), request.params.id) }),
    );

    app.post(
      '/posts/:id/kudos',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Give kudos',
          description: 'One kudos per member and post: 201 when given, 200 when you had already given it (nothing changes). Needs the post readable in full and a live subscription to its community (else 403).',
          params: IdParams,
          response: { 200: Ok(Type.Ref(Kudos)), 201: Ok(Type.Ref(Kudos)), ...memberAuthErrors, 403: notYours, ...postNotFound, ...keyReused },
        },
      },
      async (request, reply) =>
        sendData(request, reply, await service.giveKudos(memberOf(request), request.params.id, (isNew) => reply.code(isNew ? 201 : 200), answerInTransaction(request, reply))),
    );

    app.delete(
      '/posts/:id/kudos',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Take kudos back',
          description: 'Removes your kudos; without one, nothing changes (200).',
          params: IdParams,
          response: { 200: Ok(Type.Ref(Kudos)), ...memberAuthErrors, 403: notYours, ...postNotFound },
        },
      },
      async (request) => ({ success: true as const, data: await service.takeKudosBack(memberOf(request), request.params.id) }),
    );

    app.get(
      '/posts/:id/comments',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: "A post's comments",
          description: 'Oldest first (ties by id); authors shown as first name and last initial. The conversation is for the community\'s members: it needs the post readable in full and a live subscription to its community (else 403).',
          params: IdParams,
          querystring: CommentsQuery,
          response: { 200: OkList(Type.Ref(MemberComment)), ...memberAuthErrors, 403: notYours, ...postNotFound },
        },
      },
      async (request) => service.comments(memberOf(request), request.params.id, request.query),
    );

    app.post(
      '/posts/:id/comments',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Comment on a post',
          description: 'Plain text, 1 to 2,000 characters (code points after NFC), not blank, stored as written. Needs the post readable in full and a live subscription to its community (else 403). Send an `Idempotency-Key` so a retry does not comment twice.',
          params: IdParams,
          body: CommentBody,
          response: { 201: Ok(Type.Ref(MemberComment)), ...memberAuthErrors, 403: notYours, ...postNotFound, ...keyReused },
        },
      },
      async (request, reply) => sendData(request, reply, await service.comment(memberOf(request), request.params.id, request.body.body, answerInTransaction(request, reply.code(201)))),
    );

    app.delete(
      '/posts/:id/comments/:comment_id',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Delete your comment',
          description: "Removes one of your comments (someone else's is 403).",
          params: PostCommentParams,
          response: { 200: Ok(DeletedComment), ...memberAuthErrors, 403: errorResponse('The comment is not yours.'), ...postNotFound },
        },
      },
      async (request) => ({ success: true as const, data: await service.removeComment(memberOf(request), request.params.id, request.params.comment_id) }),
    );

    app.post(
      '/posts/:id/poll-votes',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Vote in a poll',
          description:
            "Your choices by option `index`: exactly one unless the poll is multiple choice. Voting again replaces your earlier choices. 409 when the post has no poll or it has closed. Needs the post readable in full and a live subscription to its community (else 403). Answers the post with the poll's new results and `my_votes`.",
          params: IdParams,
          body: VoteBody,
          response: { 200: Ok(FeedItem), ...memberAuthErrors, 403: notYours, ...postNotFound, ...conflictError('The post has no poll, or the poll has closed; or (`idempotency_key_reused`) the Idempotency-Key was already used with another request.') },
        },
      },
      async (request, reply) => sendData(request, reply, await service.vote(memberOf(request), request.params.id, request.body.options, answerInTransaction(request, reply))),
    );
  };
}
