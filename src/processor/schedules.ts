import type Stripe from 'stripe';
import type { BillingPeriod } from '../db/types.js';
import { PLATFORM_FEE_PERCENT } from './billing.js';
import { guarded } from './errors.js';

/**
 * Processor calls of a member's tier change (issue #28): a price change now, prorated, or one
 * at the end of the period through a Subscription Schedule. On the creator's connected account.
 */

/** One billing period of a price, as a schedule phase's `duration` (Stripe removed `iterations`). */
const ONE_PERIOD: Record<BillingPeriod, { interval: 'month' | 'year'; interval_count: number }> = {
  monthly: { interval: 'month', interval_count: 1 },
  quarterly: { interval: 'month', interval_count: 3 },
  yearly: { interval: 'year', interval_count: 1 },
};

/** The id of the schedule attached to a subscription, expanded or not. */
export const scheduleIdOf = (sub: Pick<Stripe.Subscription, 'schedule'>): string | null =>
  typeof sub.schedule === 'string' ? sub.schedule : (sub.schedule?.id ?? null);

/** Stripe's keys must differ per call: one request's key, told apart by what each call does. */
const keyed = (account: string, key: string | undefined, purpose: string) => ({ stripeAccount: account, ...(key ? { idempotencyKey: `${key}-${purpose}` } : {}) });

export function createScheduleCalls(stripe: Stripe) {
  const calls = {
    async retrieveSchedule(account: string, id: string) {
      return guarded('read the subscription schedule', () => stripe.subscriptionSchedules.retrieve(id, {}, { stripeAccount: account }));
    },

    /**
     * Moves the subscription's only item to another price now. `always_invoice`: credit for the
     * unused time of the old price and a charge for the rest of the period at the new one,
     * invoiced and collected at once, with `payment_behavior: pending_if_incomplete` — the price
     * changes only if that invoice is paid; declined, the subscription keeps its price and the
     * answer carries a `pending_update` (dropped by the processor ~23 h later, its invoice voided).
     * `none` (a trial: nothing was paid) changes the price only.
     */
    async changeSubscriptionPrice(
      account: string,
      input: { subscriptionId: string; itemId: string; priceId: string; proration: 'always_invoice' | 'none'; idempotencyKey?: string },
    ) {
      return guarded('change the subscription price', () =>
        stripe.subscriptions.update(
          input.subscriptionId,
          {
            items: [{ id: input.itemId, price: input.priceId }],
            proration_behavior: input.proration,
            ...(input.proration === 'always_invoice' ? { payment_behavior: 'pending_if_incomplete' as const } : {}),
          },
          keyed(account, input.idempotencyKey, 'price'),
        ),
      );
    },

    /**
     * Voids the open invoice a declined upgrade left (the one a `pending_update` waits on), which
     * drops that pending update, so a new price change starts clean. Each void has its own key.
     */
    async voidPendingUpdateInvoices(account: string, subscriptionId: string, idempotencyKey?: string) {
      const open = await guarded('list the open invoices of the subscription', () =>
        stripe.invoices.list({ subscription: subscriptionId, status: 'open', limit: 10 }, { stripeAccount: account }),
      );
      for (const invoice of open.data.filter((i) => i.billing_reason === 'subscription_update')) {
        await guarded('void the declined upgrade invoice', () => stripe.invoices.voidInvoice(invoice.id!, {}, keyed(account, idempotencyKey, `void-${invoice.id}`)));
      }
    },

    /**
     * Schedules the subscription to move to `priceId` when its current period ends: the
     * subscription's own schedule if it has one, else one made from it. Two phases: the current
     * price until the period end, then the new price for one period, after which the schedule
     * releases the subscription (it goes on at the new price). No proration: the member paid for
     * this period and keeps it. Both phases carry the platform fee, as the subscription does.
     */
    async scheduleDowngrade(
      account: string,
      input: { subscriptionId: string; scheduleId: string | null; currentPriceId: string; priceId: string; billingPeriod: BillingPeriod; periodEnd: number; idempotencyKey?: string },
    ) {
      const schedule = input.scheduleId
        ? await calls.retrieveSchedule(account, input.scheduleId)
        : await guarded('create the subscription schedule', () =>
            stripe.subscriptionSchedules.create({ from_subscription: input.subscriptionId }, keyed(account, input.idempotencyKey, 'schedule')),
          );
      const start = schedule.current_phase?.start_date ?? schedule.phases[0]?.start_date;
      return guarded('update the subscription schedule', () =>
        stripe.subscriptionSchedules.update(
          schedule.id,
          {
            phases: [
              {
                items: [{ price: input.currentPriceId, quantity: 1 }],
                application_fee_percent: PLATFORM_FEE_PERCENT,
                ...(start ? { start_date: start } : {}),
                end_date: input.periodEnd,
              },
              { items: [{ price: input.priceId, quantity: 1 }], application_fee_percent: PLATFORM_FEE_PERCENT, duration: ONE_PERIOD[input.billingPeriod] },
            ],
            end_behavior: 'release',
            proration_behavior: 'none',
          },
          keyed(account, input.idempotencyKey, `schedule-update-${input.priceId}`),
        ),
      );
    },

    async releaseSchedule(account: string, scheduleId: string, idempotencyKey?: string) {
      return guarded('release the subscription schedule', () => stripe.subscriptionSchedules.release(scheduleId, {}, keyed(account, idempotencyKey, 'release')));
    },

    /**
     * Detaches the subscription's schedule, if it has one, leaving the subscription as it is
     * now (a scheduled tier change is dropped). Stripe refuses `cancel_at_period_end` on a
     * subscription a schedule controls, so every cancel at period end calls this first.
     * Answers whether a schedule was released. A retry after a release finds none: nothing to do.
     */
    async releaseScheduleIfAny(account: string, subscriptionId: string, idempotencyKey?: string): Promise<boolean> {
      const sub = await guarded('read the subscription', () => stripe.subscriptions.retrieve(subscriptionId, {}, { stripeAccount: account }));
      const id = scheduleIdOf(sub);
      if (!id) return false;
      await calls.releaseSchedule(account, id, idempotencyKey);
      return true;
    },
  };
  return calls;
}
