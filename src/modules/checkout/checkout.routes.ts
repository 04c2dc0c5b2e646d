import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { conflictError, errorResponse, notFoundError, Ok, OkList, PaginationQuery, ProcessorId, Timestamp, Uuid } from '../../http/schemas.js';
import { MemberSubscription } from '../member-billing/member-billing.schemas.js';
import { memberOf } from '../members/member-auth.js';
import { memberAuthErrors, memberSecurity } from '../members/members.schemas.js';
import type { CheckoutService } from './checkout.service.js';
import { answerInTransaction } from '../../http/idempotency.js';

const tags = ['Member billing'];

const CheckoutSession = Type.Object({
  id: Uuid,
  url: Type.String({ description: 'The hosted checkout page: send the member there to pay.' }),
  processor_session_id: ProcessorId(),
  tier_id: Uuid,
  status: Type.Union([Type.Literal('open'), Type.Literal('complete'), Type.Literal('expired')]),
  created_at: Timestamp,
});

/** The member app's billing: open a hosted checkout, see one's own subscriptions. */
export function memberBillingRoutes(service: CheckoutService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/checkout-sessions',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Open a hosted checkout for a tier',
          description:
            "Opens the processor's hosted checkout on the tier's current price (with its trial), on the creator's account with the 10% platform fee. Send the member to `url`. The subscription appears once the processor confirms payment. 409 when the community is paused (`community_paused`), the tier is inactive (`tier_inactive`), the member already holds a live subscription to it (`already_subscribed`) or to another tier of its community (`already_member`: one live subscription per member and community; the message names the subscription to change the tier of, POST /api/v1/member/subscriptions/{id}/change-tier), or the creator has not finished setting up payments at the processor (`payments_not_enabled`; discovery shows such communities with `accepting_members: false`). With an `Idempotency-Key`, the session id and the processor's key derive from it: a retry after any failure gets the same hosted session back, never a second one.",
          body: Type.Object({ tier_id: Uuid }, { additionalProperties: false }),
          response: {
            201: Ok(CheckoutSession),
            ...memberAuthErrors,
            ...notFoundError,
            ...conflictError('Paused community, inactive tier, already subscribed to it or to another tier of the community (`already_member`), or the creator cannot take payments yet (`payments_not_enabled`).'),
            502: errorResponse('The payment processor failed; retry.'),
          },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.open(memberOf(request), request.body.tier_id, answerInTransaction(request, reply)) }),
    );

    app.get(
      '/subscriptions',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: "The member's own subscriptions",
          description: "Every subscription of the signed-in member, across creators, newest first (ties by id), paginated. Creators' internal notes are never included.",
          querystring: Type.Object(PaginationQuery, { additionalProperties: false }),
          response: { 200: OkList(MemberSubscription), ...memberAuthErrors },
        },
      },
      async (request) => service.mySubscriptions(memberOf(request), request.query),
    );
  };
}
