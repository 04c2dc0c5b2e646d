import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponse, IdParams, notFoundError, Ok, OkList, PaginationQuery } from '../../http/schemas.js';
import { memberOf } from '../members/member-auth.js';
import { memberAuthErrors, memberSecurity } from '../members/members.schemas.js';
import { Program, ProgramDetail } from './programs.schemas.js';
import type { ProgramsService } from './programs.service.js';

const tags = ['Member training'];

/** The member app's view of programs: only communities where the member holds a live subscription. */
export function memberProgramsRoutes(service: ProgramsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/programs',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Programs a member can follow',
          description: 'Programs of every community where you hold a live subscription (trialing, active or past due), newest first (ties by id).',
          querystring: Type.Object({ ...PaginationQuery }, { additionalProperties: false }),
          response: { 200: OkList(Type.Ref(Program)), ...memberAuthErrors },
        },
      },
      async (request) => service.listForMember(memberOf(request), request.query),
    );

    app.get(
      '/programs/:id',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'One program with its workouts',
          description:
            'The program with its workouts and exercise entries, as prescribed. 403 `forbidden` when you hold no live subscription to its community; 404 when there is no such program.',
          params: IdParams,
          response: {
            200: Ok(Type.Ref(ProgramDetail)),
            ...memberAuthErrors,
            403: errorResponse('You hold no live subscription to the community of this program.'),
            ...notFoundError,
          },
        },
      },
      async (request) => ({ success: true as const, data: await service.getForMember(memberOf(request), request.params.id) }),
    );
  };
}
