import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribed, type Creator, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

const itemOf = (s: Stripe.Subscription) => s.items.data[0]!;
/** `t` plus whole months on the UTC calendar (the day clamped to a short month's end, as Stripe does). */
function addMonths(t: number, months: number): number {
  const d = new Date(t * 1000);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime() / 1000;
}

/** A member on 29.99 every 30 days (a period of exactly 30 × 86,400 s), and the 299.90 yearly price of the same product. */
async function thirtyDayMember(o: { trialDays?: number } = {}) {
  const c0 = await createCreator(kit, { schedule: 'manual' });
  const base = await kit.stripe.prices.create({ product: c0.product.id, currency: 'usd', unit_amount: 2999, recurring: { interval: 'day', interval_count: 30 } }, c0.opts);
  const c: Creator = { ...c0, price: base };
  const yearly = await kit.stripe.prices.create({ product: c.product.id, currency: 'usd', unit_amount: 29990, recurring: { interval: 'year' } }, c.opts);
  const sub = await subscribed(kit, c, o);
  const toYearly = (p: Partial<Stripe.SubscriptionUpdateParams> = {}) =>
    kit.stripe.subscriptions.update(sub.id, { items: [{ id: itemOf(sub).id, price: yearly.id }], expand: ['latest_invoice'], ...p }, c.opts);
  return { c, base, yearly, sub, toYearly };
}

const invoicesOf = async (c: Creator, sub: string) => (await kit.stripe.invoices.list({ subscription: sub, limit: 100 }, c.opts)).data;

describe('a price change to another billing interval, now', () => {
  it('monthly to yearly after 10 of 30 days invoices −19.99 unused and the full 299.90 at once, and the billing cycle restarts at the change', async () => {
    const { c, base, yearly, sub, toYearly } = await thirtyDayMember();
    const at = itemOf(sub).current_period_start + 10 * DAY;
    await kit.advance(at - (await kit.now()) + 5);
    const updated = await toYearly({ proration_date: at });
    const anchor = updated.billing_cycle_anchor;
    expect(Math.abs(anchor - (await kit.now()))).toBeLessThan(5);
    expect(itemOf(updated)).toMatchObject({ price: { id: yearly.id }, current_period_start: anchor, current_period_end: addMonths(anchor, 12) });
    expect(updated.status).toBe('active');
    const invoice = updated.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', total: 27991, amount_paid: 27991 });
    expect(invoice.lines.data.map((l) => [l.amount, l.pricing?.price_details?.price, l.parent?.subscription_item_details?.proration, l.period])).toEqual([
      [-1999, base.id, true, { start: at, end: itemOf(sub).current_period_end }],
      [29990, yearly.id, false, { start: anchor, end: addMonths(anchor, 12) }],
    ]);
    const charge = (await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts)).data[0]!;
    expect(charge).toMatchObject({ amount: 27991, application_fee_amount: 2799, status: 'succeeded' });
    const bt = await kit.stripe.balanceTransactions.retrieve(charge.balance_transaction as string, {}, c.opts);
    expect(bt.net + bt.fee).toBe(bt.amount);
    await expect.poll(() => kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id && s.billing_cycle_anchor === anchor).length).toBe(1);
    const event = kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id && s.billing_cycle_anchor === anchor)[0]!;
    expect(event.data.previous_attributes).toMatchObject({ billing_cycle_anchor: sub.billing_cycle_anchor, plan: { id: base.id } });

    // The old renewal is gone: a month later nothing is invoiced; the next invoice comes a year after the change.
    await kit.advance(31 * DAY);
    expect(await invoicesOf(c, sub.id)).toHaveLength(2);
    await kit.advance(addMonths(anchor, 12) - (await kit.now()) + 60);
    const renewed = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(renewed.latest_invoice).toMatchObject({ billing_reason: 'subscription_cycle', total: 29990, amount_paid: 29990 });
    expect(itemOf(renewed)).toMatchObject({ current_period_start: addMonths(anchor, 12), current_period_end: addMonths(anchor, 24) });
    expect(await invoicesOf(c, sub.id)).toHaveLength(3);
  });

  it('with proration_behavior none the credit is left out but the new period is still invoiced at once', async () => {
    const { yearly, toYearly } = await thirtyDayMember();
    const updated = await toYearly({ proration_behavior: 'none' });
    expect(itemOf(updated).price.id).toBe(yearly.id);
    const invoice = updated.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', total: 29990 });
    expect(invoice.lines.data.map((l) => l.amount)).toEqual([29990]);
  });

  it('a declined card with pending_if_incomplete changes nothing: the yearly item waits in pending_update with the anchor it would set, and paying applies it', async () => {
    const { c, base, yearly, sub, toYearly } = await thirtyDayMember();
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: true });
    const updated = await toYearly({ proration_behavior: 'always_invoice', payment_behavior: 'pending_if_incomplete' });
    const now = await kit.now();
    expect(updated).toMatchObject({ status: 'active', billing_cycle_anchor: sub.billing_cycle_anchor });
    expect(itemOf(updated)).toMatchObject({ price: { id: base.id }, current_period_start: itemOf(sub).current_period_start, current_period_end: itemOf(sub).current_period_end });
    expect(Math.abs(updated.pending_update!.billing_cycle_anchor! - now)).toBeLessThan(5);
    expect(updated.pending_update!.subscription_items!.map((i) => i.price.id)).toEqual([yearly.id]);
    const invoice = updated.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ status: 'open', next_payment_attempt: null });
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: false });
    await kit.stripe.invoices.pay(invoice.id, {}, c.opts);
    const applied = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    const anchor = updated.pending_update!.billing_cycle_anchor!;
    expect(applied).toMatchObject({ pending_update: null, billing_cycle_anchor: anchor });
    expect(itemOf(applied)).toMatchObject({ price: { id: yearly.id }, current_period_start: anchor, current_period_end: addMonths(anchor, 12) });
  });

  it('a trialing subscription changes interval with no invoice, keeps its trial end, and the first period after the trial is a year', async () => {
    const { c, yearly, sub, toYearly } = await thirtyDayMember({ trialDays: 7 });
    const updated = await toYearly({ proration_behavior: 'always_invoice', expand: [] });
    expect(updated).toMatchObject({ status: 'trialing', trial_end: sub.trial_end, latest_invoice: sub.latest_invoice });
    expect(itemOf(updated).price.id).toBe(yearly.id);
    await kit.advance(8 * DAY);
    const after = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(after.latest_invoice).toMatchObject({ total: 29990, amount_paid: 29990 });
    expect(itemOf(after)).toMatchObject({ current_period_start: sub.trial_end, current_period_end: addMonths(sub.trial_end!, 12) });
  });
});

describe('a change to another billing interval at the period end, through a schedule', () => {
  it('yearly to monthly: the next phase is one month long, and from the switch the subscription renews monthly at the new price', async () => {
    const c = await createCreator(kit, { amount: 29990, interval: 'year', schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const monthly = await kit.stripe.prices.create({ product: c.product.id, currency: 'usd', unit_amount: 2999, recurring: { interval: 'month' } }, c.opts);
    const { current_period_start: start, current_period_end: end } = itemOf(sub);
    const schedule = await kit.stripe.subscriptionSchedules.create({ from_subscription: sub.id }, c.opts);
    const updated = await kit.stripe.subscriptionSchedules.update(
      schedule.id,
      { phases: [{ items: [{ price: c.price.id }], start_date: start, end_date: end }, { items: [{ price: monthly.id }], duration: { interval: 'month', interval_count: 1 } }] },
      c.opts,
    );
    expect(updated.phases[1]).toMatchObject({ start_date: end, end_date: addMonths(end, 1) });
    await expect(
      kit.stripe.subscriptionSchedules.update(schedule.id, { phases: [{ items: [{ price: c.price.id }], start_date: start, end_date: end }, { items: [{ price: monthly.id }], end_date: addMonths(end, 1) }] }, c.opts),
    ).resolves.toMatchObject({ status: 'active' });
    await expect(
      kit.stripe.subscriptionSchedules.update(schedule.id, { phases: [{ items: [{ price: c.price.id }], start_date: start, end_date: end }, { items: [{ price: monthly.id }], duration: { interval: 'year' } }] }, c.opts),
    ).rejects.toMatchObject({ statusCode: 400, param: 'phases[1][duration]' });

    await kit.advance(end - (await kit.now()) + 60);
    const switched = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(switched).toMatchObject({ status: 'active', schedule: null, billing_cycle_anchor: end });
    expect(itemOf(switched)).toMatchObject({ price: { id: monthly.id }, current_period_start: end, current_period_end: addMonths(end, 1) });
    expect(switched.latest_invoice).toMatchObject({ billing_reason: 'subscription_cycle', total: 2999, amount_paid: 2999 });

    await kit.advance(addMonths(end, 1) - (await kit.now()) + 60);
    const next = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(itemOf(next)).toMatchObject({ current_period_start: addMonths(end, 1), current_period_end: addMonths(end, 2) });
    expect(next.latest_invoice).toMatchObject({ billing_reason: 'subscription_cycle', total: 2999 });
    expect(await invoicesOf(c, sub.id)).toHaveLength(3);
  });
});
