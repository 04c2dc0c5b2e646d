import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { authErrors, errorResponse, IdParams, notFoundError, Ok, OkList, processorError } from '../../http/schemas.js';
import { Balance, ListPayoutsQuery, ManualPayoutBody, Payout } from './payouts.schemas.js';
import type { PayoutsService } from './payouts.service.js';
import { answerInTransaction } from '../../http/idempotency.js';

const tags = ['Payouts'];

export function payoutsRoutes(service: PayoutsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/payouts',
      {
        schema: {
          tags,
          summary: 'List payouts',
          description: "The creator's payouts, newest first (processor creation time, ties by id), mirrored from processor events and reconciliation. Filter by `status`.",
          querystring: ListPayoutsQuery,
          response: { 200: OkList(Type.Ref(Payout)), ...authErrors },
        },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.get(
      '/payouts/balance',
      {
        schema: {
          tags,
          summary: 'Balance',
          description:
            'Available and pending funds read from the processor (never a local guess), the creator net received this month and all time (charges net of the 10% platform fee, minus refunded net), the payout schedule and the next automatic payout.',
          response: { 200: Ok(Type.Ref(Balance)), ...authErrors, ...processorError },
        },
      },
      async (request) => ({ success: true as const, data: await service.balance(creatorOf(request)) }),
    );

    app.post(
      '/payouts/manual',
      {
        schema: {
          tags,
          summary: 'Request a manual payout',
          description:
            'Only while the payout schedule is `manual` (changed in the processor dashboard): otherwise 422 `manual_payouts_disabled`. The amount must be at least the minimum (422 `amount_below_minimum`) and at most the available balance (422 `insufficient_balance`, with the available amount in `details`); the processor checks the balance atomically, so concurrent requests cannot overdraw it. With an `Idempotency-Key`, a retry after any failure (a timeout, a failed local write, a crash after the processor paid out) sends the processor the same key and gets the first payout back, as it is now, never a second one.',
          body: ManualPayoutBody,
          response: {
            201: Ok(Type.Ref(Payout)),
            ...authErrors,
            422: errorResponse('Manual payouts disabled, amount below the minimum, or above the available balance.'),
            ...processorError,
          },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.manual(creatorOf(request), request.body, answerInTransaction(request, reply)) }),
    );

    app.get(
      '/payouts/:id',
      {
        schema: {
          tags,
          summary: 'Get a payout',
          description: "One payout. Another creator's payout is 404.",
          params: IdParams,
          response: { 200: Ok(Type.Ref(Payout)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request), request.params.id) }),
    );
  };
}
