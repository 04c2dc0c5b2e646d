import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerInTransaction } from '../../http/idempotency.js';
import { conflictError, errorResponse, IdParams, Ok, processorError } from '../../http/schemas.js';
import { memberOf } from '../members/member-auth.js';
import { memberAuthErrors, memberSecurity } from '../members/members.schemas.js';
import { ChangedSubscription, ChangeTierBody } from './member-subscriptions.schemas.js';
import type { MemberSubscriptionsService } from './member-subscriptions.service.js';

const tags = ['Member billing'];

/** The member app's tier change (DESIGN §5). */
export function memberSubscriptionsRoutes(service: MemberSubscriptionsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/subscriptions/:id/change-tier',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Change the tier of one’s subscription',
          description:
            "Moves the member's subscription to another tier of its community. A tier higher in the community's tier order takes effect now: the unused time of the old price is credited, the rest of the period charged at the new one, invoiced at once, and the new tier's posts open with this answer. A tier not higher takes effect at the end of the period (`scheduled_change` says which and when); the member keeps the current tier until then. During a trial either change is immediate and charges nothing. Asking for the current tier while a change is scheduled drops it; another lower tier replaces it; a higher one drops it and upgrades now. 404 for another member's subscription or a tier of another community. 409: `same_tier`, `tier_inactive`, `community_paused`, `subscription_canceled` (it has ended), `subscription_canceling` (set to cancel at period end: resume first), `conflict` (a payment is overdue). 402 `payment_declined`: the card declined an upgrade's prorated charge, so the tier did not change (the member keeps the current one, nothing is overdue); after the card is updated in the billing portal the same change can be asked again, and the declined attempt's open invoice is voided first. With an `Idempotency-Key`, a retry after any failure sends the processor the same keys and gets its first answers, never a second charge.",
          params: IdParams,
          body: ChangeTierBody,
          response: {
            200: Ok(ChangedSubscription),
            ...memberAuthErrors,
            402: errorResponse('`payment_declined`: an upgrade whose prorated charge the card declined. The tier did not change and nothing was charged; update the card in the billing portal, then ask again (with a new Idempotency-Key).'),
            404: errorResponse('No such subscription of this member, or no such tier in its community.'),
            ...conflictError('Same tier, inactive tier, paused community, an ended subscription, one set to cancel at period end, or an overdue payment.'),
            ...processorError,
          },
        },
      },
      async (request, reply) => ({
        success: true as const,
        data: await service.changeTier(memberOf(request), request.params.id, request.body.tier_id, answerInTransaction(request, reply)),
      }),
    );
  };
}
