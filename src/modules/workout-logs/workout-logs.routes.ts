import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerInTransaction, sendData } from '../../http/idempotency.js';
import { errorResponse, IdParams, notFoundError, Ok, OkList, PaginationQuery, Uuid } from '../../http/schemas.js';
import { memberOf } from '../members/member-auth.js';
import { memberAuthErrors, memberSecurity } from '../members/members.schemas.js';
import { CreatedWorkoutLog, CreateLogBody, WorkoutLog } from './workout-logs.schemas.js';
import type { WorkoutLogsService } from './workout-logs.service.js';

const tags = ['Member training'];

/** The member app logs what was really done; personal records are detected on the way in. */
export function workoutLogsRoutes(service: WorkoutLogsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/workout-logs',
      {
        // The logging statement looks the Idempotency-Key up and stores the answer (log-batch.ts).
        config: { idempotency: 'in-effect' },
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Log a workout',
          description:
            'Records the sets you really did (1 to 200) and answers the personal records they set (`prs`). Tie it to a program workout (`workout_id`) or a community (`community_id`) you hold a live subscription to (else 403), or to neither for a personal log. `performed_at` may be at most 5 minutes in the future; a log dated before ones already logged is fitted into your history and later records are recomputed. Send an `Idempotency-Key` so a retried request never logs the workout twice: the answer is stored with the log by the statement that writes it, so a retry after any failure (a lost answer, a crash) replays the first answer byte for byte (even after the log was deleted) or, if nothing was written, logs it once.',
          body: CreateLogBody,
          response: {
            201: Ok(Type.Ref(CreatedWorkoutLog)),
            ...memberAuthErrors,
            403: errorResponse('No live subscription to the community of this workout or community.'),
            ...notFoundError,
            409: errorResponse('The Idempotency-Key was used with another body.'),
          },
        },
      },
      async (request, reply) => sendData(request, reply, await service.create(memberOf(request), request.body, answerInTransaction(request, reply.code(201)))),
    );

    app.get(
      '/workout-logs',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Your workout logs',
          description: 'Your logs with their sets, newest `performed_at` first (ties by id).',
          querystring: Type.Object({ ...PaginationQuery }, { additionalProperties: false }),
          response: { 200: OkList(Type.Ref(WorkoutLog)), ...memberAuthErrors },
        },
      },
      async (request) => service.list(memberOf(request), request.query),
    );

    app.delete(
      '/workout-logs/:id',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Delete a workout log',
          description: 'Deletes one of your logs and recomputes your personal records for its exercises from the history that remains. Another member\'s log is 404.',
          params: IdParams,
          response: { 200: Ok(Type.Object({ id: Uuid, deleted: Type.Literal(true) })), ...memberAuthErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.remove(memberOf(request), request.params.id) }),
    );
  };
}
