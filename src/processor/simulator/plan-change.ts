import { collectSubscriptionInvoice, createInvoice, payInvoice } from './billing.js';
import { cardDeclined, invalidRequest, noSuch } from './errors.js';
import { createProrationItems, takePendingItems } from './invoice-items.js';
import { declineMessage } from './money.js';
import { changeInterval } from './interval-change.js';
import type { Params } from './params.js';
import { holdPendingUpdate, sameInterval, switchPrice } from './sub-period.js';
import { getObject, newId, type Ctx, type Stored } from './store.js';

export const PRORATION_BEHAVIORS = ['create_prorations', 'always_invoice', 'none'] as const;
export type ProrationBehavior = (typeof PRORATION_BEHAVIORS)[number];

/** What a price change does when its invoice is not paid (`default_incomplete` is not modelled). */
export const PAYMENT_BEHAVIORS = ['allow_incomplete', 'error_if_incomplete', 'pending_if_incomplete'] as const;
export type PaymentBehavior = (typeof PAYMENT_BEHAVIORS)[number];
export { PENDING_UPDATE_JOB, PENDING_UPDATE_SECONDS, planOf, switchPrice } from './sub-period.js';

/**
 * Loads a price a subscription may move to: active, recurring, same account and currency
 * (another interval is allowed: a change now resets the billing cycle anchor, interval-change.ts).
 */
export async function compatiblePrice(ctx: Ctx, sub: any, priceId: string, param: string): Promise<any> {
  const price = (await getObject(ctx, priceId, 'price', { param })).data;
  const current = sub.items.data[0].price;
  if (!price.active) throw invalidRequest('The price specified is inactive. This field only accepts active prices.', param);
  if (!price.recurring) throw invalidRequest(`The price specified is set to \`type=one_time\` but this field only accepts prices with \`type=recurring\`.`, param);
  if (price.currency !== current.currency) {
    throw invalidRequest(`Cannot combine currencies on a single customer. This customer has had a subscription, coupon, or invoice item with currency ${current.currency}`, param);
  }
  return price;
}

/**
 * POST /v1/subscriptions/{id} with `items[0][id]` and `items[0][price]`: the price changes
 * now. During a trial nothing is prorated or invoiced (as on Stripe). A price of another
 * interval resets the billing cycle and is invoiced at once (interval-change.ts). Otherwise the
 * billing cycle is kept and
 * `proration_behavior` decides: `create_prorations` (default) leaves the credit and charge
 * pending for the next renewal, `always_invoice` invoices and charges them at once, `none`
 * prorates nothing. The caller saves the subscription and emits its update.
 */
export async function changePrice(ctx: Ctx, sub: Stored, p: Params): Promise<void> {
  const d = sub.data;
  const items = p.list('items') ?? [];
  if (items.length !== 1) throw invalidRequest('The simulator changes one subscription item at a time: pass items[0][id] and items[0][price].', 'items');
  const item = d.items.data[0];
  const itemId = p.str('items[0][id]');
  if (!itemId) throw invalidRequest('The simulator does not add subscription items: pass items[0][id] (the existing item) with items[0][price].', 'items[0][id]');
  if (itemId !== item.id) throw noSuch('subscription item', itemId, 'items[0][id]');
  if (p.has('items[0][deleted]')) throw invalidRequest('The simulator does not delete subscription items.', 'items[0][deleted]');
  const quantity = p.int('items[0][quantity]', { min: 1 });
  if (quantity !== undefined && quantity !== 1) throw invalidRequest('The simulator supports quantity 1 only.', 'items[0][quantity]');
  const behavior: ProrationBehavior = p.enumOf('proration_behavior', PRORATION_BEHAVIORS) ?? 'create_prorations';
  const paymentBehavior: PaymentBehavior = p.enumOf('payment_behavior', PAYMENT_BEHAVIORS) ?? 'allow_incomplete';
  const start = item.current_period_start as number;
  const end = item.current_period_end as number;
  const at = p.int('proration_date') ?? ctx.now;
  if (at < start || at > end) throw invalidRequest(`proration_date must be within the subscription's current period (${start} to ${end}).`, 'proration_date');
  const priceId = p.str('items[0][price]');
  if (!priceId || priceId === item.price.id) return;
  if (d.pending_update) {
    throw invalidRequest(
      `The simulator does not change the items of a subscription with a pending update: pay or void its invoice \`${sub.internal.pending_invoice ?? d.latest_invoice}\` first.`,
      'items',
    );
  }
  const oldPrice = item.price;
  const newPrice = await compatiblePrice(ctx, d, priceId, 'items[0][price]');
  if (d.status !== 'trialing' && !sameInterval(oldPrice, newPrice)) {
    return changeInterval(ctx, sub, { oldPrice, newPrice, at, credit: behavior !== 'none', paymentBehavior });
  }
  switchPrice(d, newPrice);
  if (d.status === 'trialing' || behavior === 'none' || at >= end) return;
  await createProrationItems(ctx, { sub: d, oldPrice, newPrice, at });
  if (behavior !== 'always_invoice') return;
  if (paymentBehavior === 'allow_incomplete') return void (await invoiceNow(ctx, sub));
  await invoiceOrHold(ctx, sub, oldPrice, paymentBehavior);
}

/** The change's own invoice of the pending prorations, finalized (not charged yet). */
async function updateInvoice(ctx: Ctx, sub: Stored): Promise<{ invoice: Stored; customer: Stored }> {
  const d = sub.data;
  const id = newId('in');
  const lines = await takePendingItems(ctx, sub.id, id);
  const customer = await getObject(ctx, d.customer, 'customer', { param: 'customer' });
  const invoice = await createInvoice(ctx, { id, subscription: d, customer, reason: 'subscription_update', lines, periodStart: ctx.now, periodEnd: ctx.now });
  return { invoice, customer };
}

/** always_invoice with allow_incomplete: invoiced and charged at once; a decline makes the subscription past_due. */
async function invoiceNow(ctx: Ctx, sub: Stored): Promise<void> {
  const { invoice, customer } = await updateInvoice(ctx, sub);
  await collectSubscriptionInvoice(ctx, sub, invoice, customer);
}

/**
 * always_invoice with `error_if_incomplete` or `pending_if_incomplete`: the change stands only
 * if its invoice is paid. Declined, `error_if_incomplete` throws Stripe's 402 card error and
 * the request's transaction rolls everything back; `pending_if_incomplete` puts the old price
 * back, keeps the new item as `pending_update` (applied if the open invoice is paid before
 * `expires_at`, dropped then — pending-update.ts) and leaves the status alone: no past_due, no retries.
 */
async function invoiceOrHold(ctx: Ctx, sub: Stored, oldPrice: any, paymentBehavior: Exclude<PaymentBehavior, 'allow_incomplete'>): Promise<void> {
  const d = sub.data;
  const { invoice, customer } = await updateInvoice(ctx, sub);
  d.latest_invoice = invoice.id;
  if (invoice.data.status === 'paid') return;
  const payment = await payInvoice(ctx, invoice, d, customer, { nextAttempt: null });
  if (payment.succeeded) return;
  const code = payment.declineCode ?? 'generic_decline';
  if (paymentBehavior === 'error_if_incomplete') throw cardDeclined(code, declineMessage(code));
  const pendingItem = structuredClone(d.items.data[0]);
  switchPrice(d, oldPrice);
  await holdPendingUpdate(ctx, sub, pendingItem, invoice.id, null);
}
