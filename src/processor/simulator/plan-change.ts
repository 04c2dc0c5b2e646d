import { collectSubscriptionInvoice, createInvoice } from './billing.js';
import { invalidRequest, noSuch } from './errors.js';
import { createProrationItems, takePendingItems } from './invoice-items.js';
import type { Params } from './params.js';
import { getObject, newId, type Ctx, type Stored } from './store.js';

export const PRORATION_BEHAVIORS = ['create_prorations', 'always_invoice', 'none'] as const;
export type ProrationBehavior = (typeof PRORATION_BEHAVIORS)[number];

/** The legacy `plan` view of a recurring price, still shown on items and subscriptions. */
export const planOf = (price: any) => ({
  id: price.id,
  object: 'plan',
  active: price.active,
  amount: price.unit_amount,
  amount_decimal: price.unit_amount_decimal,
  billing_scheme: 'per_unit',
  created: price.created,
  currency: price.currency,
  interval: price.recurring.interval,
  interval_count: price.recurring.interval_count,
  livemode: false,
  metadata: price.metadata,
  meter: null,
  nickname: price.nickname,
  product: price.product,
  tiers_mode: null,
  transform_usage: null,
  trial_period_days: null,
  usage_type: 'licensed',
});

/** Puts `price` on the subscription's one item (and its `plan` views). */
export function switchPrice(sub: any, price: any): void {
  const item = sub.items.data[0];
  item.price = price;
  item.plan = planOf(price);
  sub.plan = planOf(price);
}

/**
 * Loads a price a subscription may move to: active, recurring, same account, and — in this
 * model, which keeps the billing cycle — the same currency, interval and interval_count.
 */
export async function compatiblePrice(ctx: Ctx, sub: any, priceId: string, param: string): Promise<any> {
  const price = (await getObject(ctx, priceId, 'price', { param })).data;
  const current = sub.items.data[0].price;
  if (!price.active) throw invalidRequest('The price specified is inactive. This field only accepts active prices.', param);
  if (!price.recurring) throw invalidRequest(`The price specified is set to \`type=one_time\` but this field only accepts prices with \`type=recurring\`.`, param);
  if (price.currency !== current.currency) {
    throw invalidRequest(`Cannot combine currencies on a single customer. This customer has had a subscription, coupon, or invoice item with currency ${current.currency}`, param);
  }
  const r = price.recurring;
  const c = current.recurring;
  if (r.interval !== c.interval || r.interval_count !== c.interval_count) {
    throw invalidRequest(
      `The simulator changes a subscription only to a price with the same billing interval (${c.interval_count} ${c.interval}); this price bills every ${r.interval_count} ${r.interval}.`,
      param,
    );
  }
  return price;
}

/**
 * POST /v1/subscriptions/{id} with `items[0][id]` and `items[0][price]`: the price changes
 * now, keeping the billing cycle. During a trial nothing is prorated (as on Stripe); otherwise
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
  const start = item.current_period_start as number;
  const end = item.current_period_end as number;
  const at = p.int('proration_date') ?? ctx.now;
  if (at < start || at > end) throw invalidRequest(`proration_date must be within the subscription's current period (${start} to ${end}).`, 'proration_date');
  const priceId = p.str('items[0][price]');
  if (!priceId || priceId === item.price.id) return;
  const oldPrice = item.price;
  const newPrice = await compatiblePrice(ctx, d, priceId, 'items[0][price]');
  switchPrice(d, newPrice);
  if (d.status === 'trialing' || behavior === 'none' || at >= end) return;
  await createProrationItems(ctx, { sub: d, oldPrice, newPrice, at });
  if (behavior === 'always_invoice') await invoiceNow(ctx, sub);
}

/** always_invoice: one invoice of the pending prorations, finalized and charged at once. */
async function invoiceNow(ctx: Ctx, sub: Stored): Promise<void> {
  const d = sub.data;
  const id = newId('in');
  const lines = await takePendingItems(ctx, sub.id, id);
  const customer = await getObject(ctx, d.customer, 'customer', { param: 'customer' });
  const invoice = await createInvoice(ctx, { id, subscription: d, customer, reason: 'subscription_update', lines, periodStart: ctx.now, periodEnd: ctx.now });
  await collectSubscriptionInvoice(ctx, sub, invoice, customer);
}
