import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { AppError } from '../../http/errors.js';
import { answerInTransaction } from '../../http/idempotency.js';
import { authErrors, conflictError, IdParams, notFoundError, Ok, OkList } from '../../http/schemas.js';
import { Community, CreateCommunityBody, ListCommunitiesQuery, UpdateCommunityBody } from './communities.schemas.js';
import type { CommunitiesService } from './communities.service.js';

const tags = ['Communities'];
const CommunityRef = Type.Ref(Community);

export function communitiesRoutes(service: CommunitiesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/communities',
      {
        schema: {
          tags,
          summary: 'List communities',
          description: "The creator's communities, newest first (ties broken by id), with live member and revenue figures. Paginated with `page` and `limit`.",
          querystring: ListCommunitiesQuery,
          response: { 200: OkList(CommunityRef), ...authErrors },
        },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.post(
      '/communities',
      {
        schema: {
          tags,
          summary: 'Create a community',
          description: 'Creates an active community. The slug is global across Tribes: a slug in use is 409 `slug_taken`.',
          body: CreateCommunityBody,
          response: { 201: Ok(CommunityRef), ...authErrors, ...conflictError('The slug is already taken.') },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.create(creatorOf(request), request.body, answerInTransaction(request, reply)) }),
    );

    app.get(
      '/communities/:id',
      {
        schema: {
          tags,
          summary: 'Get a community',
          description: 'One community with its live figures. Another creator\'s community is 404.',
          params: IdParams,
          response: { 200: Ok(CommunityRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request), request.params.id) }),
    );

    app.patch(
      '/communities/:id',
      {
        schema: {
          tags,
          summary: 'Update a community',
          description:
            'Changes the fields sent; `null` clears `description` or `cover_image_url`. The slug is immutable: a body carrying `slug` is 400 (create a new community for a new URL). Paused communities can be edited.',
          params: IdParams,
          body: UpdateCommunityBody,
          response: { 200: Ok(CommunityRef), ...authErrors, ...notFoundError },
        },
        // Checked before schema validation so the answer names the real problem, not "unknown field".
        preValidation: async (request) => {
          const body = request.body as Record<string, unknown> | null;
          if (body && typeof body === 'object' && 'slug' in body) {
            throw new AppError('validation_error', 'The slug cannot be changed after creation; create a new community to use another slug.', [
              { field: 'slug', message: 'is immutable' },
            ]);
          }
        },
      },
      async (request) => ({ success: true as const, data: await service.update(creatorOf(request), request.params.id, request.body) }),
    );

    app.delete(
      '/communities/:id',
      {
        schema: {
          tags,
          summary: 'Pause a community',
          description:
            'Soft delete: the community becomes `paused`, leaves discovery and refuses new subscriptions; existing subscriptions are honoured until the end of their period and are not renewed (each is set to cancel at period end at the processor, in the background; a subscription its creator had already canceled keeps that). Nothing is erased. Answers the paused community; pausing a paused one is a no-op. `POST /communities/{id}/resume` undoes it.',
          params: IdParams,
          response: { 200: Ok(CommunityRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.pause(creatorOf(request), request.params.id) }),
    );

    app.post(
      '/communities/:id/resume',
      {
        schema: {
          tags,
          summary: 'Resume a paused community',
          description: 'The way back from DELETE: the community is `active` again, listed in discovery if public and open to new subscriptions; subscriptions the pause set to end renew again (not those their creator canceled). Resuming an active community is a no-op.',
          params: IdParams,
          response: { 200: Ok(CommunityRef), ...authErrors, ...notFoundError },
        },
      },
      async (request, reply) => ({ success: true as const, data: await service.resume(creatorOf(request), request.params.id, answerInTransaction(request, reply)) }),
    );
  };
}
