import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribe, type Creator, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

/** A creator whose first price bills every 30 days (a period of exactly 30 × 86,400 s), and a dearer and a cheaper one. */
async function thirtyDayCreator(amounts = { base: 2999, up: 4999, down: 1999 }) {
  const c = await createCreator(kit, { amount: amounts.base, schedule: 'manual' });
  const price = (amount: number, interval: 'day' | 'month' = 'day', count = 30, currency = 'usd') =>
    kit.stripe.prices.create({ product: c.product.id, currency, unit_amount: amount, recurring: { interval, interval_count: count } }, c.opts);
  const base = await price(amounts.base);
  return { c: { ...c, price: base } as Creator, base, up: await price(amounts.up), down: await price(amounts.down), price };
}

async function member(c: Creator, o: { trialDays?: number } = {}) {
  const { done } = await subscribe(kit, c, o);
  expect(done.status).toBe(200);
  return kit.stripe.subscriptions.retrieve(done.body.subscription, {}, c.opts);
}

const itemOf = (s: Stripe.Subscription) => s.items.data[0]!;

async function balanceTxnsSumToBalance(c: Creator) {
  const txns = await kit.stripe.balanceTransactions.list({ limit: 100 }, c.opts);
  const balance = await kit.stripe.balance.retrieve({}, c.opts);
  const sum = txns.data.reduce((s, t) => s + t.net, 0);
  expect(sum).toBe(balance.available.concat(balance.pending).reduce((s, b) => s + b.amount, 0));
}

describe('price change with always_invoice', () => {
  it('upgrading after 10 of 30 days invoices −19.99 unused and +33.33 remaining at once, charging 13.34 with the 10 % fee taken from it', async () => {
    const { c, base, up } = await thirtyDayCreator();
    const sub = await member(c);
    const start = itemOf(sub).current_period_start;
    const at = start + 10 * DAY;
    await kit.advance(at - (await kit.now()) + 5);
    const updated = await kit.stripe.subscriptions.update(
      sub.id,
      { items: [{ id: itemOf(sub).id, price: up.id }], proration_behavior: 'always_invoice', proration_date: at, expand: ['latest_invoice'] },
      c.opts,
    );
    expect(updated.id).toBe(sub.id);
    expect(itemOf(updated).price.id).toBe(up.id);
    expect(itemOf(updated).current_period_end).toBe(itemOf(sub).current_period_end);
    const invoice = updated.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', total: 1334, amount_due: 1334, amount_paid: 1334 });
    const lines = invoice.lines.data.map((l) => ({ amount: l.amount, price: l.pricing?.price_details?.price, period: l.period, proration: l.parent?.subscription_item_details?.proration }));
    const period = { start: at, end: itemOf(sub).current_period_end };
    expect(lines).toEqual([
      { amount: -1999, price: base.id, period, proration: true },
      { amount: 3333, price: up.id, period, proration: true },
    ]);
    expect(invoice.lines.data[0]!.parent?.subscription_item_details?.proration_details?.credited_items?.invoice).toBe(sub.latest_invoice);
    const charges = await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts);
    const charge = charges.data[0]!;
    expect(charge).toMatchObject({ amount: 1334, application_fee_amount: 133, status: 'succeeded' });
    const bt = await kit.stripe.balanceTransactions.retrieve(charge.balance_transaction as string, {}, c.opts);
    expect(bt).toMatchObject({ amount: 1334, fee: 133, net: 1201 });
    await balanceTxnsSumToBalance(c);
    await expect.poll(() => kit.receiver.ofType('invoice.paid', (i) => i.id === invoice.id).length).toBe(1);
    await expect.poll(() => kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id).length).toBeGreaterThan(0);
    const event = kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id)[0]!;
    expect(event.data.previous_attributes.items.data[0].price.id).toBe(base.id);
    expect(event.data.previous_attributes.plan.id).toBe(base.id);
    expect(event.data.object.plan.id).toBe(up.id);
  });

  it('a declined upgrade invoice stays open and makes the subscription past_due with the renewal retry schedule', async () => {
    const { c, up } = await thirtyDayCreator();
    const sub = await member(c);
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: true });
    const updated = await kit.stripe.subscriptions.update(sub.id, { items: [{ id: itemOf(sub).id, price: up.id }], proration_behavior: 'always_invoice', expand: ['latest_invoice'] }, c.opts);
    const now = await kit.now();
    const invoice = updated.latest_invoice as Stripe.Invoice;
    expect(updated.status).toBe('past_due');
    expect(invoice).toMatchObject({ status: 'open', attempt_count: 1, billing_reason: 'subscription_update' });
    expect(Math.abs(invoice.next_payment_attempt! - (now + 3 * DAY))).toBeLessThan(5);
    await expect.poll(() => kit.receiver.ofType('invoice.payment_failed', (i) => i.id === invoice.id).length).toBe(1);
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: false });
    await kit.advance(3 * DAY);
    expect(await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).toMatchObject({ status: 'active' });
    expect(await kit.stripe.invoices.retrieve(invoice.id, {}, c.opts)).toMatchObject({ status: 'paid', attempt_count: 2 });
  });

  it('a downgrade invoiced at once charges nothing: its credit goes to the customer balance and the renewal uses it', async () => {
    const { c, down } = await thirtyDayCreator();
    const sub = await member(c);
    const at = itemOf(sub).current_period_start + 15 * DAY;
    const updated = await kit.stripe.subscriptions.update(
      sub.id,
      { items: [{ id: itemOf(sub).id, price: down.id }], proration_behavior: 'always_invoice', proration_date: at, expand: ['latest_invoice'] },
      c.opts,
    );
    // −round(2999 × 15/30) + round(1999 × 15/30) = −1500 + 1000 (both halves round up).
    expect(updated.latest_invoice).toMatchObject({ total: -500, amount_due: 0, status: 'paid', starting_balance: 0, ending_balance: -500 });
    expect((await kit.stripe.customers.retrieve(sub.customer as string, {}, c.opts)) as Stripe.Customer).toMatchObject({ balance: -500 });
    expect((await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts)).data).toHaveLength(1);
    await kit.advance(itemOf(sub).current_period_end - (await kit.now()) + 60);
    const renewed = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(renewed.latest_invoice).toMatchObject({ billing_reason: 'subscription_cycle', total: 1999, starting_balance: -500, ending_balance: 0, amount_due: 1499, amount_paid: 1499 });
    expect((await kit.stripe.customers.retrieve(sub.customer as string, {}, c.opts)) as Stripe.Customer).toMatchObject({ balance: 0 });
    await balanceTxnsSumToBalance(c);
  });
});

describe('price change without an immediate invoice', () => {
  it('create_prorations leaves the credit and charge pending, and the next renewal invoices them with the new price', async () => {
    const { c, up } = await thirtyDayCreator();
    const sub = await member(c);
    const at = itemOf(sub).current_period_start + 10 * DAY;
    const updated = await kit.stripe.subscriptions.update(sub.id, { items: [{ id: itemOf(sub).id, price: up.id }], proration_date: at }, c.opts);
    expect(updated.latest_invoice).toBe(sub.latest_invoice);
    const pending = await kit.stripe.invoiceItems.list({ customer: sub.customer as string, pending: true }, c.opts);
    expect(pending.data.map((i) => i.amount).sort((a, b) => a - b)).toEqual([-1999, 3333]);
    await kit.advance(itemOf(sub).current_period_end - (await kit.now()) + 60);
    const renewed = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    const invoice = renewed.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ billing_reason: 'subscription_cycle', total: 4999 + 1334, amount_paid: 6333, status: 'paid' });
    expect(invoice.lines.data.map((l) => l.amount)).toEqual([-1999, 3333, 4999]);
    expect((await kit.stripe.invoiceItems.list({ customer: sub.customer as string, pending: true }, c.opts)).data).toHaveLength(0);
  });

  it('proration_behavior none changes the price with nothing to pay until the renewal', async () => {
    const { c, up } = await thirtyDayCreator();
    const sub = await member(c);
    const updated = await kit.stripe.subscriptions.update(sub.id, { items: [{ id: itemOf(sub).id, price: up.id }], proration_behavior: 'none' }, c.opts);
    expect(itemOf(updated).price.id).toBe(up.id);
    expect(updated.latest_invoice).toBe(sub.latest_invoice);
    expect((await kit.stripe.invoiceItems.list({ customer: sub.customer as string }, c.opts)).data).toHaveLength(0);
    await kit.advance(itemOf(sub).current_period_end - (await kit.now()) + 60);
    const renewed = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(renewed.latest_invoice).toMatchObject({ total: 4999, amount_paid: 4999 });
  });

  it('a trialing subscription changes price with no proration and no invoice, and the trial ends at the new price', async () => {
    const { c, up } = await thirtyDayCreator();
    const sub = await member(c, { trialDays: 7 });
    expect(sub.status).toBe('trialing');
    const updated = await kit.stripe.subscriptions.update(sub.id, { items: [{ id: itemOf(sub).id, price: up.id }], proration_behavior: 'always_invoice' }, c.opts);
    expect(updated).toMatchObject({ status: 'trialing', latest_invoice: sub.latest_invoice });
    expect((await kit.stripe.invoices.list({ subscription: sub.id }, c.opts)).data).toHaveLength(1);
    expect((await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts)).data).toHaveLength(0);
    await kit.advance(8 * DAY);
    const after = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(after.status).toBe('active');
    expect(after.latest_invoice).toMatchObject({ total: 4999, amount_paid: 4999 });
  });
});

describe('price change refusals', () => {
  it('refuses another currency with a 400, and an unknown item with a 404', async () => {
    const { c, price } = await thirtyDayCreator();
    const sub = await member(c);
    const eur = await price(4999, 'day', 30, 'eur');
    const monthly = await price(4999, 'month', 1);
    const change = (p: Stripe.SubscriptionUpdateParams) => kit.stripe.subscriptions.update(sub.id, p, c.opts);
    await expect(change({ items: [{ id: itemOf(sub).id, price: eur.id }] })).rejects.toMatchObject({
      statusCode: 400, message: 'Cannot combine currencies on a single customer. This customer has had a subscription, coupon, or invoice item with currency usd',
    });
    await expect(change({ items: [{ id: 'si_nope', price: monthly.id }] })).rejects.toMatchObject({ statusCode: 404, message: "No such subscription item: 'si_nope'" });
    await expect(change({ items: [{ id: itemOf(sub).id, price: eur.id }], proration_behavior: 'sometimes' as 'none' })).rejects.toMatchObject({ statusCode: 400 });
    expect(itemOf(await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).price.id).toBe(itemOf(sub).price.id);
  });

  it('an Idempotency-Key replays the change instead of invoicing twice', async () => {
    const { c, up } = await thirtyDayCreator();
    const sub = await member(c);
    const params = { items: [{ id: itemOf(sub).id, price: up.id }], proration_behavior: 'always_invoice' as const };
    const first = await kit.stripe.subscriptions.update(sub.id, params, { ...c.opts, idempotencyKey: `change-${sub.id}` });
    const again = await kit.stripe.subscriptions.update(sub.id, params, { ...c.opts, idempotencyKey: `change-${sub.id}` });
    expect(again.latest_invoice).toBe(first.latest_invoice);
    expect((await kit.stripe.invoices.list({ subscription: sub.id }, c.opts)).data).toHaveLength(2);
  });
});
