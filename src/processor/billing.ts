import type Stripe from 'stripe';
import { guarded, ProcessorDeclined } from './errors.js';
import { all } from './lists.js';

/** The platform's cut of every charge, as the processor takes it (DESIGN §7). */
export const PLATFORM_FEE_PERCENT = 10;

/**
 * Processor calls of the member money flow: customers, checkout, subscriptions, refunds.
 * All on the creator's connected account (direct charges, `Stripe-Account`).
 */
export function createBillingCalls(stripe: Stripe) {
  return {
    async createCustomer(account: string, input: { creatorId: string; memberId: string; email: string; name: string }): Promise<string> {
      const customer = await guarded('create the customer', () =>
        stripe.customers.create(
          { email: input.email, name: input.name, metadata: { member_id: input.memberId } },
          { stripeAccount: account, idempotencyKey: `customer-${input.creatorId}-${input.memberId}` },
        ),
      );
      return customer.id;
    },

    async createCheckoutSession(
      account: string,
      input: { customer: string; priceId: string; trialDays: number; metadata: Record<string, string>; successUrl: string; cancelUrl: string; idempotencyKey: string },
    ) {
      return guarded('open the checkout', () =>
        stripe.checkout.sessions.create(
          {
            mode: 'subscription',
            customer: input.customer,
            line_items: [{ price: input.priceId, quantity: 1 }],
            client_reference_id: input.metadata.member_id,
            metadata: input.metadata,
            subscription_data: {
              application_fee_percent: PLATFORM_FEE_PERCENT,
              metadata: input.metadata,
              ...(input.trialDays > 0 ? { trial_period_days: input.trialDays } : {}),
            },
            success_url: input.successUrl,
            cancel_url: input.cancelUrl,
          },
          { stripeAccount: account, idempotencyKey: input.idempotencyKey },
        ),
      );
    },

    /**
     * Closes an open hosted checkout so it can no longer be paid. Answers the session's status
     * afterwards: `expired`; `complete` when it was paid first (the processor refuses to expire
     * a session that is not open, and its status then says why); `open` if the call failed.
     */
    async expireCheckoutSession(account: string, id: string): Promise<'expired' | 'complete' | 'open'> {
      const expired = await stripe.checkout.sessions.expire(id, {}, { stripeAccount: account }).catch(() => undefined);
      const status: string | null = expired?.status ?? (await guarded('read the checkout session', () => stripe.checkout.sessions.retrieve(id, {}, { stripeAccount: account }))).status;
      return status === 'complete' || status === 'expired' ? status : 'open';
    },

    async retrieveCheckoutSession(account: string, id: string) {
      return guarded('read the checkout session', () => stripe.checkout.sessions.retrieve(id, {}, { stripeAccount: account }));
    },

    async retrieveSubscription(account: string, id: string) {
      return guarded('read the subscription', () => stripe.subscriptions.retrieve(id, {}, { stripeAccount: account }));
    },

    /** Every subscription of the account, any status (reconciliation). */
    allSubscriptions(account: string): AsyncGenerator<Stripe.Subscription> {
      return all('list subscriptions', (after) =>
        stripe.subscriptions.list({ status: 'all', limit: 100, ...(after ? { starting_after: after } : {}) }, { stripeAccount: account }),
      );
    },

    async setCancelAtPeriodEnd(account: string, id: string, cancelAtPeriodEnd: boolean, idempotencyKey?: string) {
      return guarded('update the subscription', () =>
        stripe.subscriptions.update(id, { cancel_at_period_end: cancelAtPeriodEnd }, { stripeAccount: account, ...(idempotencyKey ? { idempotencyKey } : {}) }),
      );
    },

    async cancelNow(account: string, id: string, idempotencyKey?: string) {
      return guarded('cancel the subscription', () => stripe.subscriptions.cancel(id, {}, { stripeAccount: account, ...(idempotencyKey ? { idempotencyKey } : {}) }));
    },

    /** The newest paid invoice of a subscription and the payment intent that paid it. */
    async lastPayment(account: string, subscriptionId: string): Promise<{ invoiceId: string; paymentIntent: string } | undefined> {
      const invoices = await guarded('read the invoices', () =>
        stripe.invoices.list({ subscription: subscriptionId, status: 'paid', limit: 10 }, { stripeAccount: account }),
      );
      for (const invoice of invoices.data) {
        const payment = (invoice as unknown as { payments?: { data: Array<{ payment?: { payment_intent?: string | { id: string } } }> } }).payments?.data[0];
        const pi = payment?.payment?.payment_intent;
        if (pi && invoice.id) return { invoiceId: invoice.id, paymentIntent: typeof pi === 'string' ? pi : pi.id };
      }
      return undefined;
    },

    /**
     * Refunds (part of) a payment. The processor checks what remains refundable atomically,
     * so of two concurrent refunds of the last cents exactly one succeeds.
     */
    async refund(account: string, input: { paymentIntent: string; amountCents?: number; metadata: Record<string, string>; idempotencyKey?: string }) {
      try {
        return await stripe.refunds.create(
          { payment_intent: input.paymentIntent, ...(input.amountCents ? { amount: input.amountCents } : {}), metadata: input.metadata },
          { stripeAccount: account, ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}) },
        );
      } catch (err) {
        const e = err as { code?: string; message?: string };
        if (e.code === 'charge_already_refunded' || e.code === 'amount_too_large') throw new ProcessorDeclined(e.code, e.message);
        return guarded('refund the payment', () => Promise.reject(err));
      }
    },

    async retrieveInvoice(account: string, id: string) {
      return guarded('read the invoice', () => stripe.invoices.retrieve(id, {}, { stripeAccount: account }));
    },

    /** Every paid invoice of the account (reconciliation). */
    paidInvoices(account: string): AsyncGenerator<Stripe.Invoice> {
      return all('list invoices', (after) =>
        stripe.invoices.list({ status: 'paid', limit: 100, ...(after ? { starting_after: after } : {}) }, { stripeAccount: account }),
      );
    },

    async refundsOfPayment(account: string, paymentIntent: string) {
      return guarded('list refunds', () => stripe.refunds.list({ payment_intent: paymentIntent, limit: 100 }, { stripeAccount: account }));
    },

  };
}
