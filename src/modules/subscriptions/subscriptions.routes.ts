import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { authErrors, conflictError, errorResponse, IdParams, notFoundError, Ok, OkList, processorError } from '../../http/schemas.js';
import { CancelBody, ListSubscriptionsQuery, Refund, RefundBody, Subscription } from './subscriptions.schemas.js';
import type { SubscriptionsService } from './subscriptions.service.js';
import { answerInTransaction } from '../../http/idempotency.js';

const tags = ['Subscriptions'];
const SubscriptionRef = Type.Ref(Subscription);

export function subscriptionsRoutes(service: SubscriptionsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/subscriptions',
      {
        schema: {
          tags,
          summary: 'List subscriptions',
          description:
            "Subscriptions in the creator's communities, newest first (processor creation time, ties by id). Subscriptions are created by members paying through hosted checkout, never through this API. Filters: `community_id`, `tier_id`, `member_id`, `status`.",
          querystring: ListSubscriptionsQuery,
          response: { 200: OkList(SubscriptionRef), ...authErrors },
        },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.get(
      '/subscriptions/:id',
      {
        schema: {
          tags,
          summary: 'Get a subscription',
          description: "One subscription. Another creator's subscription is 404.",
          params: IdParams,
          response: { 200: Ok(SubscriptionRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request), request.params.id) }),
    );

    app.post(
      '/subscriptions/:id/cancel',
      {
        schema: {
          tags,
          summary: 'Cancel a subscription',
          description:
            '`immediate: true` cancels now, with no pro-rata refund. Otherwise the subscription stays active with `cancel_at_period_end: true` and the member keeps access until the period ends. `reason` is an internal note, stored and shown to the creator only. 409 `subscription_canceled` when already canceled. The processor acts first; the answer mirrors its state. With an `Idempotency-Key`, a retry after any failure (even a crash after the processor acted) sends the processor the same key, gets its first answer, mirrors the subscription as it is now and stores the answer; a retry of an answered request replays it. A retry of an immediate cancel whose first attempt was never answered may find the subscription already canceled by the processor\'s event: 409 `subscription_canceled` then means it is done.',
          params: IdParams,
          body: CancelBody,
          response: { 200: Ok(SubscriptionRef), ...authErrors, ...notFoundError, ...conflictError('The subscription is already canceled.'), ...processorError },
        },
      },
      async (request, reply) => ({ success: true as const, data: await service.cancel(creatorOf(request), request.params.id, request.body ?? {}, answerInTransaction(request, reply)) }),
    );

    app.post(
      '/subscriptions/:id/refund',
      {
        schema: {
          tags,
          summary: 'Refund the last payment',
          description:
            "Refunds the subscription's last paid invoice: all that remains of it, or `amount_cents` of it. The platform fee is reversed in proportion. 409 `nothing_to_refund` when the payment was already refunded in full or there is none (a trial); 422 `amount_exceeds_refundable` when `amount_cents` is more than what remains. Of two concurrent refunds of the same remainder exactly one succeeds. Refunding does not cancel the subscription. With an `Idempotency-Key`, a retry after any failure (a timeout, a failed local write, a crash after the processor refunded) sends the processor the same key and gets the first refund back, never a second one; if a renewal was paid meanwhile (the last invoice changed), the processor refuses the key with other details and the retry is 409 `idempotency_key_reused`.",
          params: IdParams,
          body: RefundBody,
          response: {
            201: Ok(Type.Ref(Refund)),
            ...authErrors,
            ...notFoundError,
            ...conflictError('Nothing refundable remains.'),
            422: errorResponse('The amount is more than what remains refundable.'),
            ...processorError,
          },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.refund(creatorOf(request), request.params.id, request.body ?? {}, answerInTransaction(request, reply)) }),
    );
  };
}
