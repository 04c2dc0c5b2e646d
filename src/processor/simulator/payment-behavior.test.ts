import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribed, type Creator, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

const itemOf = (s: Stripe.Subscription) => s.items.data[0]!;
const HOUR = 3600;

/** A member on a 29.99/month price with a declining card, and the 49.99 price of the same product. */
async function declining() {
  const c = await createCreator(kit, { schedule: 'manual' });
  const sub = await subscribed(kit, c);
  const up = await kit.stripe.prices.create({ product: c.product.id, currency: 'usd', unit_amount: 4999, recurring: { interval: 'month' } }, c.opts);
  await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: true });
  const upgrade = (behavior: Stripe.SubscriptionUpdateParams.PaymentBehavior) =>
    kit.stripe.subscriptions.update(sub.id, { items: [{ id: itemOf(sub).id, price: up.id }], proration_behavior: 'always_invoice', payment_behavior: behavior, expand: ['latest_invoice'] }, c.opts);
  return { c, sub, up, upgrade };
}

const portalCard = async (c: Creator, customer: string, pm: string) => {
  await kit.stripe.billingPortal.configurations.create({ features: { payment_method_update: { enabled: true }, invoice_history: { enabled: true } } }, c.opts);
  const session = await kit.stripe.billingPortal.sessions.create({ customer, return_url: 'http://app.test/back' }, c.opts);
  const res = await fetch(`${session.url}/card`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `payment_method=${pm}` });
  expect(res.status).toBe(303);
};

describe('payment_behavior on a price change with always_invoice', () => {
  it('pending_if_incomplete, declined: items and status stay, the new item waits in pending_update with its invoice open, no past_due and no retries', async () => {
    const { c, sub, up, upgrade } = await declining();
    const updated = await upgrade('pending_if_incomplete');
    expect(updated.status).toBe('active');
    expect(itemOf(updated).price.id).toBe(itemOf(sub).price.id);
    expect((updated as any).plan.id).toBe(itemOf(sub).price.id);
    expect(updated.pending_update).toMatchObject({ billing_cycle_anchor: null, trial_end: null, trial_from_plan: null });
    // 23 hours after the change, on the processor's own clock (the invoice is made at the same moment).
    expect(updated.pending_update!.expires_at).toBe((updated.latest_invoice as Stripe.Invoice).created + 23 * HOUR);
    expect(updated.pending_update!.subscription_items!.map((i) => [i.id, i.price.id])).toEqual([[itemOf(sub).id, up.id]]);
    const invoice = updated.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'open', attempt_count: 1, next_payment_attempt: null });
    await expect.poll(() => kit.receiver.ofType('invoice.payment_failed', (i) => i.id === invoice.id).length).toBe(1);
    await expect.poll(() => kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id && s.pending_update !== null).length).toBe(1);
    const event = kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id && s.pending_update !== null)[0]!;
    expect(event.data.previous_attributes).toMatchObject({ pending_update: null, latest_invoice: sub.latest_invoice });
    expect(event.data.previous_attributes.items).toBeUndefined();
    // A day later than a first retry would come: no charge attempted again, still active.
    await kit.advance(3 * DAY + HOUR);
    const charges = await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts);
    expect(charges.data.filter((ch) => ch.status === 'failed')).toHaveLength(1);
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).status).toBe('active');
  });

  it('pending_if_incomplete: at expires_at the invoice is voided and the pending update dropped (pending_update_expired)', async () => {
    const { c, sub, upgrade } = await declining();
    const updated = await upgrade('pending_if_incomplete');
    const invoiceId = (updated.latest_invoice as Stripe.Invoice).id;
    await kit.advance(23 * HOUR - 60);
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).pending_update).not.toBeNull();
    await kit.advance(120);
    const after = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    expect(after).toMatchObject({ status: 'active', pending_update: null });
    expect(itemOf(after).price.id).toBe(itemOf(sub).price.id);
    const invoice = await kit.stripe.invoices.retrieve(invoiceId, {}, c.opts);
    expect(invoice.status).toBe('void');
    expect(invoice.status_transitions.voided_at).not.toBeNull();
    await expect.poll(() => kit.receiver.ofType('invoice.voided', (i) => i.id === invoiceId).length).toBe(1);
    await expect.poll(() => kit.receiver.ofType('customer.subscription.pending_update_expired', (s) => s.id === sub.id).length).toBe(1);
  });

  it('pending_if_incomplete: a new card in the portal pays the open invoice and applies the pending update (pending_update_applied)', async () => {
    const { c, sub, up, upgrade } = await declining();
    const updated = await upgrade('pending_if_incomplete');
    const invoiceId = (updated.latest_invoice as Stripe.Invoice).id;
    await kit.advance(2 * HOUR);
    await portalCard(c, sub.customer as string, 'pm_card_visa');
    const after = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(after).toMatchObject({ status: 'active', pending_update: null });
    expect(itemOf(after).price.id).toBe(up.id);
    expect(after.latest_invoice).toMatchObject({ id: invoiceId, status: 'paid', attempt_count: 2 });
    await expect.poll(() => kit.receiver.ofType('customer.subscription.pending_update_applied', (s) => s.id === sub.id).length).toBe(1);
    await expect.poll(() => kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id && s.plan.id === up.id).length).toBe(1);
    // Nothing expires later: the expiry job was dropped with the pending update.
    await kit.advance(DAY);
    expect(kit.receiver.ofType('customer.subscription.pending_update_expired', (s) => s.id === sub.id)).toHaveLength(0);
    expect((await kit.stripe.invoices.retrieve(invoiceId, {}, c.opts)).status).toBe('paid');
  });

  it('pending_if_incomplete: POST /v1/invoices/{id}/pay applies it once the card pays; declined it is a 402 card error', async () => {
    const { c, sub, up, upgrade } = await declining();
    const invoiceId = ((await upgrade('pending_if_incomplete')).latest_invoice as Stripe.Invoice).id;
    await expect(kit.stripe.invoices.pay(invoiceId, {}, c.opts)).rejects.toMatchObject({ type: 'StripeCardError', statusCode: 402, code: 'card_declined' });
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: false });
    expect(await kit.stripe.invoices.pay(invoiceId, {}, c.opts)).toMatchObject({ id: invoiceId, status: 'paid' });
    const after = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    expect(after.pending_update).toBeNull();
    expect(itemOf(after).price.id).toBe(up.id);
  });

  it('pending_if_incomplete: voiding the open invoice drops the pending update, and a new change is accepted', async () => {
    const { c, sub, up, upgrade } = await declining();
    const invoiceId = ((await upgrade('pending_if_incomplete')).latest_invoice as Stripe.Invoice).id;
    await expect(upgrade('pending_if_incomplete')).rejects.toMatchObject({ statusCode: 400, param: 'items' });
    expect(await kit.stripe.invoices.voidInvoice(invoiceId, {}, c.opts)).toMatchObject({ id: invoiceId, status: 'void' });
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).pending_update).toBeNull();
    await expect(kit.stripe.invoices.voidInvoice(invoiceId, {}, c.opts)).rejects.toMatchObject({ statusCode: 400 });
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: false });
    const again = await upgrade('pending_if_incomplete');
    expect(again.pending_update).toBeNull();
    expect(itemOf(again).price.id).toBe(up.id);
    expect(again.latest_invoice).toMatchObject({ status: 'paid' });
  });

  it('pending_if_incomplete with a card that pays changes the price at once, as allow_incomplete would', async () => {
    const { sub, up, upgrade } = await declining();
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: false });
    const updated = await upgrade('pending_if_incomplete');
    expect(updated).toMatchObject({ status: 'active', pending_update: null });
    expect(itemOf(updated).price.id).toBe(up.id);
    expect(updated.latest_invoice).toMatchObject({ status: 'paid' });
  });

  it('error_if_incomplete, declined: a 402 card error and nothing changes', async () => {
    const { c, sub, upgrade } = await declining();
    await expect(upgrade('error_if_incomplete')).rejects.toMatchObject({ type: 'StripeCardError', statusCode: 402, code: 'card_declined', decline_code: 'generic_decline' });
    const after = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    expect(after).toMatchObject({ status: 'active', pending_update: null, latest_invoice: sub.latest_invoice });
    expect(itemOf(after).price.id).toBe(itemOf(sub).price.id);
    expect((await kit.stripe.invoices.list({ subscription: sub.id }, c.opts)).data).toHaveLength(1);
  });

  it('allow_incomplete (the default), declined: the price changes and the subscription goes past_due, as before', async () => {
    const { up, upgrade } = await declining();
    const updated = await upgrade('allow_incomplete');
    expect(updated).toMatchObject({ status: 'past_due', pending_update: null });
    expect(itemOf(updated).price.id).toBe(up.id);
  });

  it('an unknown payment_behavior is 400', async () => {
    const { upgrade } = await declining();
    await expect(upgrade('default_incomplete' as never)).rejects.toMatchObject({ statusCode: 400 });
  });
});
