import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { answerInTransaction } from '../../http/idempotency.js';
import { creatorOf } from '../../http/auth.js';
import { authErrors, conflictError, IdParams, notFoundError, Ok, OkList } from '../../http/schemas.js';
import {
  CreateProgramBody,
  CreateWorkoutBody,
  Deleted,
  ListProgramsQuery,
  Program,
  ProgramDetail,
  UpdateProgramBody,
  UpdateWorkoutBody,
  Workout,
  WorkoutOrderBody,
  WORKOUTS_MAX,
} from './programs.schemas.js';
import type { ProgramsService } from './programs.service.js';

const tags = ['Workout programs'];
const ENTRY_RULES =
  'Each exercise entry names an exercise of the catalog or one of your own (`exercise_id`, else 400), `sets` 1–20, `reps` as text ("8", "8-12", "AMRAP", "30s"), optional `load_kg` ≥ 0 with at most 2 decimals and `rest_sec` 0–900.';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function programsRoutes(service: ProgramsService): FastifyPluginAsyncTypebox {
  /**
   * Routes whose body names things inside a program check the program first: another
   * creator's program is 404 whatever the body says, never a 400 about its contents.
   * (A malformed id is left to validation.)
   */
  const programMustExist = async (request: FastifyRequest) => {
    const { id } = request.params as { id?: string };
    if (id && UUID.test(id)) await service.assertProgram(creatorOf(request), id);
  };

  return async (app) => {
    app.get(
      '/workout-programs',
      {
        schema: {
          tags,
          summary: 'List workout programs',
          description: 'Your programs, newest first (ties by id), each with its number of workouts. Filter by `community_id` (404 if that community is not yours).',
          querystring: ListProgramsQuery,
          response: { 200: OkList(Type.Ref(Program)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.post(
      '/workout-programs',
      {
        schema: {
          tags,
          summary: 'Create a workout program',
          description:
            'Creates a program in one of your communities (404 for a community that is not yours); members with a live subscription to it see it in the app. `duration_weeks` 1–52, `frequency_per_week` 1–7, `description` markdown up to 20,000 characters. Add workouts with `POST /workout-programs/{id}/workouts`.',
          body: CreateProgramBody,
          response: { 201: Ok(Type.Ref(ProgramDetail)), ...authErrors, ...notFoundError },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.create(creatorOf(request), request.body, answerInTransaction(request, reply)) }),
    );

    app.get(
      '/workout-programs/:id',
      {
        schema: {
          tags,
          summary: 'Get a workout program',
          description: "The program with its workouts in order, each with its exercise entries (and exercise names). Another creator's program is 404.",
          params: IdParams,
          response: { 200: Ok(Type.Ref(ProgramDetail)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.detail(creatorOf(request), request.params.id) }),
    );

    app.patch(
      '/workout-programs/:id',
      {
        schema: {
          tags,
          summary: 'Update a workout program',
          description: 'Changes the fields sent, with the same rules as on create. The community of a program cannot change.',
          params: IdParams,
          body: UpdateProgramBody,
          response: { 200: Ok(Type.Ref(ProgramDetail)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.update(creatorOf(request), request.params.id, request.body) }),
    );

    app.delete(
      '/workout-programs/:id',
      {
        schema: {
          tags,
          summary: 'Delete a workout program',
          description: "Removes the program and its workouts from your API and from members' apps. Workouts members already logged keep their history.",
          params: IdParams,
          response: { 200: Ok(Deleted), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.remove(creatorOf(request), request.params.id) }),
    );

    app.post(
      '/workout-programs/:id/workouts',
      {
        preValidation: programMustExist,
        schema: {
          tags,
          summary: 'Add a workout to a program',
          description: `Appends a workout (last in the program's order) with 1 to 50 exercise entries. A program holds at most ${WORKOUTS_MAX} workouts: the next one is 409 \`conflict\` until one is deleted. ${ENTRY_RULES}`,
          params: IdParams,
          body: CreateWorkoutBody,
          response: { 201: Ok(Type.Ref(Workout)), ...authErrors, ...notFoundError, ...conflictError(`The program already holds ${WORKOUTS_MAX} workouts.`) },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.addWorkout(creatorOf(request), request.params.id, request.body, answerInTransaction(request, reply)) }),
    );

    app.put(
      '/workout-programs/:id/workout-order',
      {
        preValidation: programMustExist,
        schema: {
          tags,
          summary: 'Reorder the workouts of a program',
          description: "Sets the order of the program's workouts: `workout_ids` lists each of its workouts exactly once (else 400). Answers the program in its new order.",
          params: IdParams,
          body: WorkoutOrderBody,
          response: { 200: Ok(Type.Ref(ProgramDetail)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.reorder(creatorOf(request), request.params.id, request.body) }),
    );

    app.patch(
      '/workouts/:id',
      {
        schema: {
          tags,
          summary: 'Update a workout',
          description: `Renames the workout and/or replaces its exercise entries (\`exercises\` is the whole new list). ${ENTRY_RULES}`,
          params: IdParams,
          body: UpdateWorkoutBody,
          response: { 200: Ok(Type.Ref(Workout)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.updateWorkout(creatorOf(request), request.params.id, request.body) }),
    );

    app.delete(
      '/workouts/:id',
      {
        schema: {
          tags,
          summary: 'Delete a workout',
          description: 'Removes the workout from its program (the workouts after it move up one place). Logs members made of it keep their history.',
          params: IdParams,
          response: { 200: Ok(Deleted), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.removeWorkout(creatorOf(request), request.params.id) }),
    );
  };
}
