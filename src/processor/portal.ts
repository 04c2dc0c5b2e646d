import type Stripe from 'stripe';
import { guarded } from './errors.js';

/**
 * The processor's hosted customer portal (Stripe Billing's), where a member updates the card,
 * sees invoices and cancels at period end. On the creator's connected account, like every
 * member money call; the session URL is a short-lived bearer link, answered and never kept.
 */
export function createPortalCalls(stripe: Stripe) {
  return {
    /**
     * The portal configuration of a creator's account: the portal refuses sessions on an account
     * without one. Keyed by our creator id, so two first visits at once get the same one back.
     */
    async createPortalConfiguration(account: string, input: { creatorId: string; headline: string }): Promise<string> {
      const configuration = await guarded('set up the billing portal', () =>
        stripe.billingPortal.configurations.create(
          {
            features: {
              payment_method_update: { enabled: true },
              invoice_history: { enabled: true },
              // At period end, like the member API's own cancel: access lasts what was paid for.
              subscription_cancel: { enabled: true, mode: 'at_period_end' },
            },
            business_profile: { headline: input.headline },
          },
          { stripeAccount: account, idempotencyKey: `portal-config-${input.creatorId}` },
        ),
      );
      return configuration.id;
    },

    async createPortalSession(account: string, input: { customer: string; configuration: string; returnUrl: string; idempotencyKey?: string }): Promise<string> {
      const session = await guarded('open the billing portal', () =>
        stripe.billingPortal.sessions.create(
          { customer: input.customer, configuration: input.configuration, return_url: input.returnUrl },
          { stripeAccount: account, ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}) },
        ),
      );
      return session.url;
    },
  };
}
