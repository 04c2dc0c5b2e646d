import type Stripe from 'stripe';
import { guarded, ProcessorDeclined } from './errors.js';
import { all } from './lists.js';

/** Processor calls of the money-out side: balance, balance transactions, payouts. */
export function createPayoutCalls(stripe: Stripe) {
  return {
    async retrieveBalance(account: string) {
      return guarded('read the balance', () => stripe.balance.retrieve({}, { stripeAccount: account }));
    },

    balanceTransactions(account: string) {
      return all('list balance transactions', (after) =>
        stripe.balanceTransactions.list({ limit: 100, ...(after ? { starting_after: after } : {}) }, { stripeAccount: account }),
      );
    },

    /**
     * Balance transactions newer than `cursor` (an id the caller already holds), a page at a
     * time from the oldest page on, each page newest first as Stripe lists them.
     */
    async *balanceTransactionsNewerThan(account: string, cursor: string): AsyncGenerator<Stripe.BalanceTransaction[]> {
      let before = cursor;
      for (;;) {
        const list = await guarded('list balance transactions', () =>
          stripe.balanceTransactions.list({ limit: 100, ending_before: before }, { stripeAccount: account }),
        );
        if (list.data.length === 0) return;
        yield list.data;
        if (!list.has_more) return;
        before = list.data[0]!.id;
      }
    },

    payouts(account: string) {
      return all('list payouts', (after) => stripe.payouts.list({ limit: 100, ...(after ? { starting_after: after } : {}) }, { stripeAccount: account }));
    },

    refunds(account: string) {
      return all('list refunds', (after) => stripe.refunds.list({ limit: 100, ...(after ? { starting_after: after } : {}) }, { stripeAccount: account }));
    },

    async retrievePayout(account: string, id: string) {
      return guarded('read the payout', () => stripe.payouts.retrieve(id, {}, { stripeAccount: account }));
    },

    /**
     * A manual payout. The processor checks the available balance atomically, so two
     * concurrent requests can never overdraw it: the loser is told the balance is short.
     */
    async createPayout(account: string, input: { amountCents: number; currency: string; idempotencyKey: string }) {
      try {
        return await stripe.payouts.create(
          { amount: input.amountCents, currency: input.currency },
          { stripeAccount: account, idempotencyKey: input.idempotencyKey },
        );
      } catch (err) {
        const e = err as { code?: string; message?: string };
        if (e.code === 'balance_insufficient' || e.code === 'payouts_not_allowed') throw new ProcessorDeclined(e.code, e.message);
        return guarded('create the payout', () => Promise.reject(err));
      }
    },
  };
}
