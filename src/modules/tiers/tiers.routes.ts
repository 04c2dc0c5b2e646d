import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { authErrors, conflictError, IdParams, notFoundError, Ok, OkList, processorError } from '../../http/schemas.js';
import { CreateTierBody, ListTiersQuery, Tier, UpdateTierBody } from './tiers.schemas.js';
import type { TiersService } from './tiers.service.js';
import { answerInTransaction } from '../../http/idempotency.js';

const tags = ['Tiers'];
const TierRef = Type.Ref(Tier);

export function tiersRoutes(service: TiersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/tiers',
      {
        schema: {
          tags,
          summary: 'List tiers',
          description: "The creator's tiers, newest first (ties by id). Filter by `community_id` (404 if that community is not yours) and `is_active`.",
          querystring: ListTiersQuery,
          response: { 200: OkList(TierRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.post(
      '/tiers',
      {
        schema: {
          tags,
          summary: 'Create a tier',
          description:
            "Creates the tier and its product and recurring price at the payment processor, on the creator's connected account. A paused community takes no new tiers (409 `community_paused`). If the processor fails the answer is 502 and nothing is created. With an `Idempotency-Key`, the tier id and the processor's keys derive from it: a retry after any failure reuses the product and price the first attempt created (no second product). Without one, a failed local write archives the product and price it created.",
          body: CreateTierBody,
          response: { 201: Ok(TierRef), ...authErrors, ...notFoundError, ...conflictError('The community is paused.'), ...processorError },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.create(creatorOf(request), request.body, answerInTransaction(request, reply)) }),
    );

    app.get(
      '/tiers/:id',
      {
        schema: {
          tags,
          summary: 'Get a tier',
          description: "One tier with its live subscriber count. Another creator's tier is 404.",
          params: IdParams,
          response: { 200: Ok(TierRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request), request.params.id) }),
    );

    app.patch(
      '/tiers/:id',
      {
        schema: {
          tags,
          summary: 'Update a tier',
          description:
            'Changes the fields sent. A new `price_cents` (or `billing_period`) on an active tier creates a new processor price used by new subscribers; existing subscribers keep their price, and the previous price is archived at the processor. Changing the price of an inactive tier is 409 `tier_inactive`. `is_active: true` reactivates a tier (409 `community_paused` if its community is paused).',
          params: IdParams,
          body: UpdateTierBody,
          response: {
            200: Ok(TierRef),
            ...authErrors,
            ...notFoundError,
            ...conflictError('The tier is inactive, its community is paused, or it changed concurrently.'),
            ...processorError,
          },
        },
      },
      async (request) => ({ success: true as const, data: await service.update(creatorOf(request), request.params.id, request.body) }),
    );

    app.delete(
      '/tiers/:id',
      {
        schema: {
          tags,
          summary: 'Deactivate a tier',
          description:
            'The tier stops accepting subscriptions and its processor price is archived; existing subscriptions continue. Answers the deactivated tier; deactivating an inactive tier is a no-op. `PATCH {"is_active": true}` reactivates it.',
          params: IdParams,
          response: { 200: Ok(TierRef), ...authErrors, ...notFoundError, ...processorError },
        },
      },
      async (request) => ({ success: true as const, data: await service.deactivate(creatorOf(request), request.params.id) }),
    );
  };
}
