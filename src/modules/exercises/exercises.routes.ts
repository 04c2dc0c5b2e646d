import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerInTransaction } from '../../http/idempotency.js';
import { creatorOf } from '../../http/auth.js';
import { authErrors, conflictError, IdParams, notFoundError, Ok, OkList } from '../../http/schemas.js';
import { memberOf } from '../members/member-auth.js';
import { memberAuthErrors, memberSecurity } from '../members/members.schemas.js';
import { CreateExerciseBody, Exercise, ListExercisesQuery } from './exercises.schemas.js';
import type { ExercisesService } from './exercises.service.js';

const tags = ['Exercises'];
const ExerciseRef = Type.Ref(Exercise);
const FILTERS =
  'Filter by `muscle_group` (a closed set; an unknown group is 400), `equipment`, `kind` and `q` (text in the English or Portuguese name). Ordered by name, ties by id.';

export function exercisesRoutes(service: ExercisesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/exercises',
      {
        schema: {
          tags,
          summary: 'List exercises',
          description: `The shared catalog (120+ reviewed exercises with demonstration videos) plus your own exercises. ${FILTERS}`,
          querystring: ListExercisesQuery,
          response: { 200: OkList(ExerciseRef), ...authErrors },
        },
      },
      async (request) => service.listForCreator(creatorOf(request), request.query),
    );

    app.post(
      '/exercises',
      {
        schema: {
          tags,
          summary: 'Add your own exercise',
          description:
            "Adds an exercise to your catalog, visible only to you and your members; use it in workouts like any catalog exercise. The name is unique among your own exercises (409 otherwise). `bodyweight` equipment cannot be combined with other equipment.",
          body: CreateExerciseBody,
          response: { 201: Ok(ExerciseRef), ...authErrors, ...conflictError('You already have an exercise with this name.') },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.create(creatorOf(request), request.body, answerInTransaction(request, reply)) }),
    );

    app.get(
      '/exercises/:id',
      {
        schema: {
          tags,
          summary: 'Get an exercise',
          description: "A catalog exercise or one of your own. Another creator's exercise is 404.",
          params: IdParams,
          response: { 200: Ok(ExerciseRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request), request.params.id) }),
    );
  };
}

/** The member app's exercise picker. */
export function memberExercisesRoutes(service: ExercisesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/exercises',
      {
        schema: {
          tags: ['Member training'],
          security: memberSecurity,
          summary: 'Exercises a member can log',
          description: `The shared catalog plus the own exercises of every creator you hold a live subscription with. ${FILTERS}`,
          querystring: ListExercisesQuery,
          response: { 200: OkList(ExerciseRef), ...memberAuthErrors },
        },
      },
      async (request) => service.listForMember(memberOf(request), request.query),
    );
  };
}
