import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerInTransaction, sendData } from '../../http/idempotency.js';
import { conflictError, errorResponse, IdParams, notFoundError, Ok, OkList, Pagination } from '../../http/schemas.js';
import { memberOf } from '../members/member-auth.js';
import { memberAuthErrors, memberSecurity } from '../members/members.schemas.js';
import { BOARD_RULES } from './challenges.routes.js';
import { LeaderboardQuery, MemberChallenge, MemberChallengesQuery, MemberLeaderboard } from './challenges.schemas.js';
import type { MemberChallengesService } from './member-challenges.service.js';

const tags = ['Member challenges'];

/** The member app's challenges: what is open, joining and leaving, the board with your own row. */
export function memberChallengesRoutes(service: MemberChallengesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/challenges',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Your challenges',
          description:
            'The challenges you take part in (any status) and the scheduled or running ones of communities where you hold a live subscription, latest `starts_at` first (ties by id), each with `joined`, `can_join` (your tier qualifies and it is open), your `score` and `rank`.',
          querystring: MemberChallengesQuery,
          response: { 200: OkList(Type.Ref(MemberChallenge)), ...memberAuthErrors },
        },
      },
      async (request) => service.list(memberOf(request), request.query),
    );

    app.post(
      '/challenges/:id/join',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Join a challenge',
          description:
            'Takes part while the challenge is scheduled or running (409 once finished or canceled, 409 `community_paused` while its community is paused). You need a live subscription (trialing, active or past due — not incomplete, unpaid or paused) to its community whose tier equals or exceeds the minimum tier in the tier order; otherwise 403, naming the tier needed, if you hold or held a subscription there, and 404 if you never did. Your logs already in the window count at once. Joining again answers the same participation (200), even if your tier has changed since. You score while your subscription qualifies: from the moment it ends, stops being live or moves below the minimum, your score stays as it was and logs written since do not count; qualifying again counts every log in the window, as joining does.',
          params: IdParams,
          response: {
            200: Ok(Type.Ref(MemberChallenge)),
            ...memberAuthErrors,
            403: errorResponse('Your subscription does not reach the minimum tier, or you hold none in the community.'),
            ...notFoundError,
            ...conflictError('The challenge has finished or was canceled, or its community is paused.'),
          },
        },
      },
      async (request, reply) => sendData(request, reply, await service.join(memberOf(request), request.params.id, answerInTransaction(request, reply))),
    );

    app.post(
      '/challenges/:id/leave',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Leave a challenge',
          description:
            'Stops taking part while the challenge is scheduled or running (409 after): your row leaves the board. Joining again later recomputes your score from your logs. Leaving a challenge you are not in changes nothing (200) if you hold a live subscription to its community; else 403, or 404 if you never took part nor held a subscription there.',
          params: IdParams,
          response: {
            200: Ok(Type.Ref(MemberChallenge)),
            ...memberAuthErrors,
            403: errorResponse('You neither take part nor hold a live subscription to the community.'),
            ...notFoundError,
            ...conflictError('The challenge has finished or was canceled.'),
          },
        },
      },
      async (request, reply) => sendData(request, reply, await service.leave(memberOf(request), request.params.id, answerInTransaction(request, reply))),
    );

    app.get(
      '/challenges/:id/leaderboard',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          security: memberSecurity,
          summary: 'A challenge leaderboard, with your row',
          description: `The same board the creator sees, plus \`me\`: your own row wherever it falls (null when you do not take part). Open to members whose live subscription (trialing, active or past due) to the community is on a tier that equals or exceeds the challenge's minimum, or on any tier when it has none; taking part is not enough once your subscription stops qualifying. Others who take part or hold or held a subscription there get 403; anyone else 404, as for a challenge that does not exist. ${BOARD_RULES}`,
          params: IdParams,
          querystring: LeaderboardQuery,
          response: {
            200: Type.Object({ success: Type.Literal(true), data: Type.Ref(MemberLeaderboard), pagination: Type.Ref(Pagination) }),
            ...memberAuthErrors,
            403: errorResponse('Your subscription to the community is not live, or its tier is below the minimum.'),
            ...notFoundError,
          },
        },
      },
      async (request) => service.leaderboard(memberOf(request), request.params.id, request.query),
    );
  };
}
