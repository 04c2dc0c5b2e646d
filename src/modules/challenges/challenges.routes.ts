import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { answerInTransaction, sendData } from '../../http/idempotency.js';
import { authErrors, conflictError, IdParams, notFoundError, Ok, OkList, Pagination } from '../../http/schemas.js';
import { Challenge, CreateChallengeBody, Leaderboard, LeaderboardQuery, ListChallengesQuery, UpdateChallengeBody } from './challenges.schemas.js';
import type { ChallengesService } from './challenges.service.js';

const tags = ['Challenges'];

export const BOARD_RULES =
  'Rankings are ordered by score (highest first); ties go to the member who reached the score first in their training (the latest workout that counted, or for streaks the day the longest run was completed), then by member id. Ranks are 1-based and distinct. `delta` compares each rank with the end of the last UTC day the daily job ranked (`+N` places gained, `-N` lost, `+0` unchanged or new since). Scores are kept up to date as logs are written, back-dated or deleted, so a page reads the current standings; `pagination.total` is the number of participants. `limit` defaults to 50.';

/** Challenges a creator runs in their communities, and their live leaderboards. */
export function challengesRoutes(service: ChallengesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/challenges',
      {
        schema: {
          tags,
          summary: 'Create a challenge',
          description:
            'Starts a challenge in one of your communities (404 if it is not yours, 409 `community_paused` if it is paused). Members with a live subscription whose tier meets `tier_min_id` join it from the app; every log of theirs performed in `[starts_at, starts_at + duration_days)` scores, including logs made before they joined. `starts_at` may be in the past (the challenge is then running at once). A duration outside the recommended 21–90 days is accepted with a `warnings` entry. `tier_min_id` must be a tier of the same community (400) that is active (409 `tier_inactive`). Send an `Idempotency-Key` to make retries safe.',
          body: CreateChallengeBody,
          response: { 201: Ok(Type.Ref(Challenge)), ...authErrors, ...notFoundError, ...conflictError('The community is paused, or the minimum tier is deactivated.') },
        },
      },
      async (request, reply) => sendData(request, reply, await service.create(creatorOf(request), request.body, answerInTransaction(request, reply.code(201)))),
    );

    app.get(
      '/challenges',
      {
        schema: {
          tags,
          summary: 'List challenges',
          description:
            'Your challenges, latest `starts_at` first (ties by id). Filter by `community_id` (404 if not yours) and by `status`, which is derived from the clock: `scheduled` before `starts_at`, `running` until `ends_at`, `finished` after, `canceled` once canceled.',
          querystring: ListChallengesQuery,
          response: { 200: OkList(Type.Ref(Challenge)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.get(
      '/challenges/:id',
      {
        schema: {
          tags,
          summary: 'Get a challenge',
          description: "The challenge with its `status`, `ends_at` and `participants_count`. Another creator's challenge is 404.",
          params: IdParams,
          response: { 200: Ok(Type.Ref(Challenge)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request), request.params.id) }),
    );

    app.patch(
      '/challenges/:id',
      {
        schema: {
          tags,
          summary: 'Update a challenge',
          description:
            '`name` and `description` change at any time. `starts_at` (not in the past), `duration_days`, `metric`, `exercise_id` and `tier_min_id` change only while the challenge is `scheduled` (409 once it has started, finished or been canceled), with the same rules as on create; the participants are rescored in the same transaction. Moving off `workouts_with_exercise` drops the exercise. The community cannot change.',
          params: IdParams,
          body: UpdateChallengeBody,
          response: { 200: Ok(Type.Ref(Challenge)), ...authErrors, ...notFoundError, ...conflictError('The challenge has started, or the minimum tier is deactivated.') },
        },
      },
      async (request) => ({ success: true as const, data: await service.update(creatorOf(request), request.params.id, request.body) }),
    );

    app.post(
      '/challenges/:id/cancel',
      {
        schema: {
          tags,
          summary: 'Cancel a challenge',
          description:
            'Stops the challenge: no one can join or leave any more and the scores freeze as they are (the board stays readable). Canceling a canceled challenge answers it unchanged; a finished challenge cannot be canceled (409): its results stand.',
          params: IdParams,
          response: { 200: Ok(Type.Ref(Challenge)), ...authErrors, ...notFoundError, ...conflictError('The challenge has finished.') },
        },
      },
      async (request, reply) => sendData(request, reply, await service.cancel(creatorOf(request), request.params.id, answerInTransaction(request, reply))),
    );

    app.get(
      '/challenges/:id/leaderboard',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: 'Challenge leaderboard',
          description: `One page of the challenge's rankings. ${BOARD_RULES}`,
          params: IdParams,
          querystring: LeaderboardQuery,
          response: {
            200: Type.Object({ success: Type.Literal(true), data: Type.Ref(Leaderboard), pagination: Type.Ref(Pagination) }),
            ...authErrors,
            ...notFoundError,
          },
        },
      },
      async (request) => service.leaderboard(creatorOf(request), request.params.id, request.query),
    );
  };
}
