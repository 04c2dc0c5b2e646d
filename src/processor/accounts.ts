import type Stripe from 'stripe';
import { guarded } from './errors.js';

/**
 * Processor calls of the creator's connected account: opening it, reading its state, and
 * the two hosted pages a creator is sent to (Stripe Connect's onboarding and the Express
 * dashboard). Links are answered to the caller and never kept: each is a bearer credential.
 */
export function createAccountCalls(stripe: Stripe) {
  return {
    /** An Express connected account for a new creator; our creator id is its idempotency key. */
    async createConnectedAccount(input: { creatorId: string; email: string; name: string }): Promise<Stripe.Account> {
      return guarded('create the connected account', () =>
        stripe.accounts.create(
          {
            type: 'express',
            email: input.email,
            business_profile: { name: input.name },
            metadata: { creator_id: input.creatorId },
          },
          { idempotencyKey: `creator-account-${input.creatorId}` },
        ),
      );
    },

    /** Closes an account nothing refers to (a creator whose local write failed). */
    async deleteConnectedAccount(account: string): Promise<void> {
      await guarded('close the connected account', () => stripe.accounts.del(account));
    },

    async retrieveAccount(account: string): Promise<Stripe.Account> {
      return guarded('read the account', () => stripe.accounts.retrieve(account));
    },

    /**
     * A fresh Account Link for hosted onboarding, collecting what is eventually due up front
     * (Stripe's guide: fewer trips back for the creator). It expires within minutes and works
     * once; `refreshUrl` is where the processor sends a visit to a spent or expired one.
     */
    async createOnboardingLink(account: string, urls: { refreshUrl: string; returnUrl: string }): Promise<{ url: string; expiresAt: number }> {
      const link = await guarded('create the onboarding link', () =>
        stripe.accountLinks.create({
          account,
          type: 'account_onboarding',
          collection_options: { fields: 'eventually_due' },
          refresh_url: urls.refreshUrl,
          return_url: urls.returnUrl,
        }),
      );
      return { url: link.url, expiresAt: link.expires_at };
    },

    /** A single-use sign-in link to the creator's own Express dashboard (payout schedule, balance). */
    async createDashboardLink(account: string): Promise<string> {
      return (await guarded('create the dashboard link', () => stripe.accounts.createLoginLink(account))).url;
    },
  };
}
