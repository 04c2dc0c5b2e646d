import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribed, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

const utc = (y: number, m: number, d: number, h = 0) => Date.UTC(y, m - 1, d, h) / 1000;
const period = (s: Stripe.Subscription) => [s.items.data[0]!.current_period_start, s.items.data[0]!.current_period_end];

describe('renewals', () => {
  it('renews monthly on calendar boundaries from the anchor, clamping Jan 31 to the end of February', async () => {
    const now = await kit.now();
    const year = new Date(now * 1000).getUTCFullYear() + 1;
    await kit.advance(utc(year, 1, 31, 10) - now);
    const c = await createCreator(kit, { amount: 1000, schedule: 'manual' });
    const quarterly = await createCreator(kit, { amount: 2700, intervalCount: 3, schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const qsub = await subscribed(kit, quarterly);
    const start = sub.start_date;
    expect(start - utc(year, 1, 31, 10)).toBeLessThan(60);
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    const sameTime = start % DAY;
    const feb = utc(year, 2, leap ? 29 : 28) + sameTime;
    expect(period(sub)).toEqual([start, feb]);
    expect(period(qsub)[1]).toBe(utc(year, 4, 30) + (qsub.start_date % DAY));

    await kit.advance(feb - (await kit.now()) + 60);
    const renewed = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(renewed.status).toBe('active');
    expect(period(renewed)).toEqual([feb, utc(year, 3, 31) + sameTime]);
    const inv = renewed.latest_invoice as Stripe.Invoice;
    expect(inv).toMatchObject({ status: 'paid', amount_paid: 1000, billing_reason: 'subscription_cycle', created: feb });
    expect(inv.lines.data[0]!.period).toEqual({ start: feb, end: utc(year, 3, 31) + sameTime });

    await kit.advance(utc(year, 3, 31) + sameTime - (await kit.now()) + 60);
    const third = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    expect(period(third)).toEqual([utc(year, 3, 31) + sameTime, utc(year, 4, 30) + sameTime]);
    const charges = await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts);
    expect(charges.data.map((ch) => ch.created)).toEqual([utc(year, 3, 31) + sameTime, feb, start]);
    expect((await kit.stripe.invoices.list({ subscription: qsub.id }, quarterly.opts)).data).toHaveLength(1);
  });

  it('a failed renewal goes past_due, is retried 3, 5 and 7 days after the first failure, then the subscription is canceled', async () => {
    const c = await createCreator(kit, { amount: 1500, schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const fail = await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: true });
    expect(fail.status).toBe(200);
    const end = period(sub)[1]!;
    await kit.advance(end - (await kit.now()) + 60);
    const pastDue = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(pastDue.status).toBe('past_due');
    const invoice = pastDue.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: end + 3 * DAY });
    expect(kit.receiver.ofType('invoice.payment_failed', (i) => i.id === invoice.id)).toHaveLength(1);

    await kit.advance(3 * DAY);
    await kit.advance(2 * DAY);
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).status).toBe('past_due');
    expect((await kit.stripe.invoices.retrieve(invoice.id, {}, c.opts)).next_payment_attempt).toBe(end + 7 * DAY);
    await kit.advance(2 * DAY);
    const canceled = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    expect(canceled.status).toBe('canceled');
    expect(canceled.ended_at).toBe(end + 7 * DAY);
    expect(canceled.cancellation_details?.reason).toBe('payment_failed');
    const attempts = await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts);
    expect(attempts.data.filter((ch) => ch.status === 'failed').map((ch) => ch.created - end).sort((a, b) => a - b)).toEqual([0, 3 * DAY, 5 * DAY, 7 * DAY]);
    expect(kit.receiver.ofType('invoice.payment_failed', (i) => i.id === invoice.id)).toHaveLength(4);
    expect(kit.receiver.ofType('customer.subscription.deleted', (s) => s.id === sub.id)).toHaveLength(1);
    expect((await kit.stripe.invoices.retrieve(invoice.id, {}, c.opts)).attempt_count).toBe(4);
  });

  it('a successful retry makes a past_due subscription active again and pays the invoice', async () => {
    const c = await createCreator(kit, { amount: 1500, schedule: 'manual' });
    const sub = await subscribed(kit, c);
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: true }, { 'stripe-account': c.account });
    const end = period(sub)[1]!;
    await kit.advance(end - (await kit.now()) + 60);
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).status).toBe('past_due');
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: false });
    await kit.advance(3 * DAY);
    const healed = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(healed.status).toBe('active');
    expect(healed.latest_invoice).toMatchObject({ status: 'paid', attempt_count: 2, amount_paid: 1500 });
    expect(kit.receiver.ofType('invoice.paid', (i) => i.id === (healed.latest_invoice as Stripe.Invoice).id)).toHaveLength(1);
    await kit.advance(4 * DAY);
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).status).toBe('active');
  });
});

describe('cancellation', () => {
  it('cancel_at_period_end keeps the subscription until the period ends, then cancels it without invoicing', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const end = period(sub)[1]!;
    const updated = await kit.stripe.subscriptions.update(sub.id, { cancel_at_period_end: true }, c.opts);
    expect(updated).toMatchObject({ status: 'active', cancel_at_period_end: true, cancel_at: end });
    // Events of ordinary API calls are delivered asynchronously.
    await expect.poll(() => kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id).length).toBe(1);
    const event = kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id)[0]!;
    expect(event.data.previous_attributes).toMatchObject({ cancel_at_period_end: false, cancel_at: null });
    await kit.advance(end - (await kit.now()) - 60);
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).status).toBe('active');
    await kit.advance(120);
    const ended = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    expect(ended).toMatchObject({ status: 'canceled', ended_at: end });
    expect((await kit.stripe.invoices.list({ subscription: sub.id }, c.opts)).data).toHaveLength(1);
    expect(kit.receiver.ofType('customer.subscription.deleted', (s) => s.id === sub.id)).toHaveLength(1);
  });

  it('DELETE cancels at once; canceled subscriptions leave the default list but show with status=canceled', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const canceled = await kit.stripe.subscriptions.cancel(sub.id, {}, c.opts);
    expect(canceled.status).toBe('canceled');
    expect(canceled.ended_at).toBe(canceled.canceled_at);
    expect((await kit.stripe.subscriptions.list({}, c.opts)).data).toHaveLength(0);
    expect((await kit.stripe.subscriptions.list({ status: 'canceled' }, c.opts)).data.map((s) => s.id)).toEqual([sub.id]);
    expect((await kit.stripe.subscriptions.list({ status: 'all' }, c.opts)).data).toHaveLength(1);
    await expect(kit.stripe.subscriptions.cancel(sub.id, {}, c.opts)).rejects.toMatchObject({ statusCode: 400 });
    await expect.poll(() => kit.receiver.ofType('customer.subscription.deleted', (s) => s.id === sub.id).length).toBe(1);
    await kit.advance(40 * DAY);
    expect((await kit.stripe.invoices.list({ subscription: sub.id }, c.opts)).data).toHaveLength(1);
  });
});
