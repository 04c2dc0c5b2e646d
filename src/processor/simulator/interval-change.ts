import { collectSubscriptionInvoice, createInvoice, payInvoice, planLine } from './billing.js';
import { cardDeclined } from './errors.js';
import { createProrationItems, takePendingItems } from './invoice-items.js';
import { declineMessage } from './money.js';
import { firstPeriodEnd, holdPendingUpdate, reanchor, switchPrice } from './sub-period.js';
import { getObject, newId, type Ctx, type Stored } from './store.js';

export interface IntervalChange {
  oldPrice: any;
  newPrice: any;
  /** The moment the old price's unused time is credited from (proration_date). */
  at: number;
  /** `none` leaves the credit out; the new period is invoiced at once whatever it says. */
  credit: boolean;
  paymentBehavior: 'allow_incomplete' | 'error_if_incomplete' | 'pending_if_incomplete';
}

/**
 * A price change now to another interval or interval_count, as Stripe does it: the billing
 * cycle anchor resets to now, the new period is one new interval from now, and an invoice is
 * made at once — the old price's unused time credited (unless `none`) and the new price billed
 * in full for the new period — and charged as an `always_invoice` change is (payment_behavior:
 * allow_incomplete → past_due on decline; error_if_incomplete → 402, all rolled back;
 * pending_if_incomplete → nothing changes, the new item waits in `pending_update` with its
 * `billing_cycle_anchor`). The caller saves the subscription and emits its update.
 */
export async function changeInterval(ctx: Ctx, sub: Stored, change: IntervalChange): Promise<void> {
  const d = sub.data;
  const { oldPrice, newPrice, at } = change;
  const remaining = d.items.data[0].current_period_end - at;
  if (change.credit && remaining > 0) await createProrationItems(ctx, { sub: d, oldPrice, newPrice, at, creditOnly: true });
  const id = newId('in');
  const end = firstPeriodEnd(newPrice, ctx.now);
  const lines = [...(await takePendingItems(ctx, sub.id, id)), await planLine(ctx, newPrice, newPrice.unit_amount, ctx.now, end)];
  const customer = await getObject(ctx, d.customer, 'customer', { param: 'customer' });
  const invoice = await createInvoice(ctx, { id, subscription: d, customer, reason: 'subscription_update', lines, periodStart: ctx.now, periodEnd: ctx.now });
  const apply = async () => {
    switchPrice(d, newPrice);
    await reanchor(ctx, sub, ctx.now);
  };
  if (change.paymentBehavior === 'allow_incomplete') {
    await collectSubscriptionInvoice(ctx, sub, invoice, customer);
    return apply();
  }
  d.latest_invoice = invoice.id;
  if (invoice.data.status === 'paid') return apply();
  const payment = await payInvoice(ctx, invoice, d, customer, { nextAttempt: null });
  if (payment.succeeded) return apply();
  const code = payment.declineCode ?? 'generic_decline';
  if (change.paymentBehavior === 'error_if_incomplete') throw cardDeclined(code, declineMessage(code));
  const pendingItem = { ...structuredClone(d.items.data[0]), price: newPrice, current_period_start: ctx.now, current_period_end: end };
  await holdPendingUpdate(ctx, sub, pendingItem, invoice.id, ctx.now);
}
