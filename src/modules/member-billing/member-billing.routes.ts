import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerInTransaction, withoutUrl } from '../../http/idempotency.js';
import { conflictError, errorResponse, IdParams, Ok, OkList, PaginationQuery, processorError } from '../../http/schemas.js';
import { memberOf } from '../members/member-auth.js';
import { memberAuthErrors, memberSecurity } from '../members/members.schemas.js';
import { BillingPortalBody, BillingPortalLink, MemberPayment, MemberSubscription } from './member-billing.schemas.js';
import type { MemberBillingService } from './member-billing.service.js';

const tags = ['Member billing'];
const subscriptionNotFound = { 404: errorResponse("No such subscription of this member (another member's is not found either).") };

const KEYED =
  ' The processor acts first and the answer mirrors what it says. With an `Idempotency-Key`, a retry after any failure sends the processor the same key and gets its first answer, the subscription as it is now.';

/** The member's own billing: cancel and resume, the processor's billing portal, payments (DESIGN §5). */
export function memberSelfServiceRoutes(service: MemberBillingService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/subscriptions/:id/cancel',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: "Cancel the member's subscription at period end",
          description:
            "Sets the member's own subscription to end at the end of the current period (`cancel_at_period_end: true`); access lasts until then and nothing is refunded. A pending tier change (a downgrade waiting for the period end) is dropped: the processor does not hold both. Cancelling again answers it unchanged. 409 `subscription_canceled` when it has already ended." +
            KEYED,
          params: IdParams,
          response: { 200: Ok(MemberSubscription), ...memberAuthErrors, ...subscriptionNotFound, ...conflictError('The subscription has ended (`subscription_canceled`).'), ...processorError },
        },
      },
      async (request, reply) => ({ success: true as const, data: await service.cancel(memberOf(request), request.params.id, answerInTransaction(request, reply)) }),
    );

    app.post(
      '/subscriptions/:id/resume',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: "Undo the member's cancel before the period ends",
          description:
            "Lifts `cancel_at_period_end` of the member's own subscription, so it renews again. Resuming one that is not set to cancel answers it unchanged. 409 `subscription_canceled` when it has already ended or when its creator canceled it (the creator's cancel wins; only the creator can undo it), and 409 `community_paused` while its community is paused (its subscriptions end with the period until the creator resumes the community)." +
            KEYED,
          params: IdParams,
          response: {
            200: Ok(MemberSubscription),
            ...memberAuthErrors,
            ...subscriptionNotFound,
            ...conflictError('Ended or canceled by the creator (`subscription_canceled`), or the community is paused (`community_paused`).'),
            ...processorError,
          },
        },
      },
      async (request, reply) => ({ success: true as const, data: await service.resume(memberOf(request), request.params.id, answerInTransaction(request, reply)) }),
    );

    app.post(
      '/billing-portal',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: "Open the processor's billing portal",
          description:
            "A session of the processor's hosted billing portal (Stripe's customer portal) on the community's creator: the member updates the card (a failed renewal is retried on the new one), sees and downloads invoices, and can cancel at period end. It shows the member's subscriptions with that creator, in any of its communities. Send the member to `url` at once; it expires within minutes and returns to `BILLING_PORTAL_RETURN_URL`. 404 unless the member has or had a subscription in the community. The link is never stored: an Idempotency-Key replay answers `url: null`.",
          body: BillingPortalBody,
          response: {
            201: Ok(BillingPortalLink),
            ...memberAuthErrors,
            404: errorResponse('No such community, or the member never subscribed in it.'),
            ...processorError,
          },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.billingPortal(memberOf(request), request.body.community_id, answerInTransaction(request, reply, withoutUrl)) }),
    );

    app.get(
      '/payments',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: "The member's own payments",
          description:
            "Every paid invoice of the signed-in member's subscriptions, across creators, newest first (ties by id), paginated, each with its refunds. Mirrored from the processor (events and reconciliation), so a payment or refund shows up moments after the processor made it.",
          querystring: Type.Object(PaginationQuery, { additionalProperties: false }),
          response: { 200: OkList(MemberPayment), ...memberAuthErrors },
        },
      },
      async (request) => service.payments(memberOf(request), request.query),
    );
  };
}
