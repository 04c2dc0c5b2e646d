import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribe, subscribed, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

describe('catalog and accounts through the stripe SDK', () => {
  it('creates an express account, a product and a quarterly price, and reads them back', async () => {
    const account = await kit.stripe.accounts.create({ type: 'express', country: 'BR', email: 'coach@example.com' });
    expect(account.id).toMatch(/^acct_/);
    expect(account.default_currency).toBe('brl');
    expect(account.settings?.payouts?.schedule).toEqual({ delay_days: 7, interval: 'daily' });
    const opts = { stripeAccount: account.id };
    const product = await kit.stripe.products.create({ name: 'Força Total', metadata: { tier: 'gold' } }, opts);
    const price = await kit.stripe.prices.create({ product: product.id, currency: 'brl', unit_amount: 8990, recurring: { interval: 'month', interval_count: 3 } }, opts);
    expect(price).toMatchObject({ object: 'price', type: 'recurring', unit_amount: 8990, recurring: { interval: 'month', interval_count: 3 }, livemode: false });
    expect((await kit.stripe.prices.retrieve(price.id, {}, opts)).product).toBe(product.id);
    const updated = await kit.stripe.prices.update(price.id, { active: false }, opts);
    expect(updated.active).toBe(false);
    const listed = await kit.stripe.prices.list({ product: product.id, active: false }, opts);
    expect(listed.data.map((p) => p.id)).toEqual([price.id]);
    expect((await kit.stripe.products.update(product.id, { name: 'Força Máxima' }, opts)).name).toBe('Força Máxima');
    const weekly = await kit.stripe.accounts.update(account.id, { settings: { payouts: { schedule: { interval: 'weekly' } } } });
    expect(weekly.settings?.payouts?.schedule).toEqual({ delay_days: 7, interval: 'weekly', weekly_anchor: 'monday' });
    const monthly = await kit.stripe.accounts.update(account.id, { settings: { payouts: { schedule: { interval: 'monthly' } } } });
    expect(monthly.settings?.payouts?.schedule).toEqual({ delay_days: 7, interval: 'monthly', monthly_anchor: 1 });
  });

  it('scopes objects to the Stripe-Account header and answers unknown ones as Stripe does', async () => {
    const c = await createCreator(kit);
    await expect(kit.stripe.prices.retrieve(c.price.id)).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404, code: 'resource_missing' });
    await expect(kit.stripe.prices.retrieve(c.price.id, {}, { stripeAccount: 'acct_doesnotexist' })).rejects.toMatchObject({ statusCode: 403, code: 'account_invalid' });
    // Request options passed where params belong reach the API as parameters; Stripe refuses them.
    await expect(kit.stripe.prices.retrieve(c.price.id, c.opts as never)).rejects.toMatchObject({ statusCode: 400, code: 'parameter_unknown', param: 'stripeAccount' });
    await expect(kit.stripe.prices.create({ currency: 'usd', product: c.product.id } as Stripe.PriceCreateParams, c.opts)).rejects.toMatchObject({
      statusCode: 400,
      code: 'parameter_missing',
      param: 'unit_amount',
    });
  });

  it('rejects requests without a test secret key with a 401', async () => {
    const bad = new Stripe('pk_live_nope', { host: '127.0.0.1', port: kit.sim.port, protocol: 'http', maxNetworkRetries: 0 });
    await expect(bad.balance.retrieve()).rejects.toMatchObject({ type: 'StripeAuthenticationError', statusCode: 401 });
    const res = await fetch(`${kit.sim.url}/v1/balance`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.type).toBe('invalid_request_error');
  });
});

describe('checkout', () => {
  it('a paid checkout creates an active subscription with a paid invoice and puts the net in pending balance', async () => {
    const c = await createCreator(kit, { amount: 2999 });
    const { session, done } = await subscribe(kit, c);
    expect(session.url).toBe(`${kit.sim.url}/c/pay/${session.id}`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'complete', payment_status: 'paid', client_reference_id: 'member-1', metadata: { community: 'c1' } });

    const sub = await kit.stripe.subscriptions.retrieve(done.body.subscription, { expand: ['latest_invoice', 'customer'] }, c.opts);
    expect(sub.status).toBe('active');
    expect(sub.application_fee_percent).toBe(10);
    expect((sub.customer as Stripe.Customer).email).toBe('maria@example.com');
    const invoice = sub.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ status: 'paid', amount_paid: 2999, billing_reason: 'subscription_create' });
    expect(invoice.parent?.subscription_details?.subscription).toBe(sub.id);
    const item = sub.items.data[0]!;
    expect(item.current_period_end - item.current_period_start).toBeGreaterThanOrEqual(28 * DAY);

    const piId = invoice.payments!.data[0]!.payment.payment_intent as string;
    const pi = await kit.stripe.paymentIntents.retrieve(piId, { expand: ['latest_charge'] }, c.opts);
    const charge = pi.latest_charge as Stripe.Charge;
    expect(charge).toMatchObject({ status: 'succeeded', amount: 2999, application_fee_amount: 300 });

    const balance = await kit.stripe.balance.retrieve({}, c.opts);
    expect(balance.pending).toEqual([{ amount: 2699, currency: 'usd', source_types: { card: 2699 } }]);
    expect(balance.available[0]!.amount).toBe(0);
    const txns = await kit.stripe.balanceTransactions.list({ type: 'charge' }, c.opts);
    expect(txns.data[0]).toMatchObject({ amount: 2999, fee: 300, net: 2699, status: 'pending', source: charge.id });
    expect(txns.data[0]!.available_on - txns.data[0]!.created).toBe(7 * DAY);

    const listed = await kit.stripe.subscriptions.list({ customer: sub.customer instanceof Object ? (sub.customer as Stripe.Customer).id : sub.customer, status: 'active' }, c.opts);
    expect(listed.data.map((s) => s.id)).toEqual([sub.id]);
    const byPrice = await kit.stripe.subscriptions.list({ price: c.price.id }, c.opts);
    expect(byPrice.data).toHaveLength(1);
    const invoices = await kit.stripe.invoices.list({ subscription: sub.id }, c.opts);
    expect(invoices.data.map((i) => i.id)).toEqual([invoice.id]);
    const retrieved = await kit.stripe.checkout.sessions.retrieve(session.id, { expand: ['subscription', 'line_items'] }, c.opts);
    expect((retrieved.subscription as Stripe.Subscription).id).toBe(sub.id);
    expect(retrieved.line_items?.data[0]?.price?.id).toBe(c.price.id);
  });

  it('a declined card answers 402 and creates no subscription', async () => {
    const c = await createCreator(kit);
    const { session, done } = await subscribe(kit, c, { paymentMethod: 'pm_card_chargeDeclined' });
    expect(done.status).toBe(402);
    expect(done.body.error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
    const after = await kit.stripe.checkout.sessions.retrieve(session.id, {}, c.opts);
    expect(after.status).toBe('open');
    expect(after.subscription).toBeNull();
    expect((await kit.stripe.subscriptions.list({}, c.opts)).data).toHaveLength(0);
    // The member can still pay the same session with a good card.
    const retry = await kit.helper(`/v1/test_helpers/checkout_sessions/${session.id}/complete`, { payment_method: 'pm_card_visa' }, { 'stripe-account': c.account });
    expect(retry.status).toBe(200);
    expect(retry.body.status).toBe('complete');
  });

  it('a trial subscribes without charging, warns three days before the end, then charges and turns active', async () => {
    const c = await createCreator(kit, { amount: 4900, schedule: 'manual' });
    const sub = await subscribed(kit, c, { trialDays: 7 });
    expect(sub.status).toBe('trialing');
    expect(sub.trial_end! - sub.trial_start!).toBe(7 * DAY);
    const first = await kit.stripe.invoices.retrieve(sub.latest_invoice as string, {}, c.opts);
    expect(first).toMatchObject({ amount_due: 0, status: 'paid' });
    expect((await kit.stripe.charges.list({}, c.opts)).data).toHaveLength(0);

    await kit.advance(4 * DAY + 60);
    expect(kit.receiver.ofType('customer.subscription.trial_will_end', (s) => s.id === sub.id)).toHaveLength(1);
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).status).toBe('trialing');

    await kit.advance(3 * DAY);
    const after = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(after.status).toBe('active');
    expect(after.items.data[0]!.current_period_start).toBe(sub.trial_end);
    expect(after.latest_invoice).toMatchObject({ status: 'paid', amount_paid: 4900, billing_reason: 'subscription_cycle' });
    const charges = await kit.stripe.charges.list({}, c.opts);
    expect(charges.data.map((ch) => [ch.amount, ch.application_fee_amount, ch.created])).toEqual([[4900, 490, sub.trial_end]]);
  });

  it('the hosted checkout page pays with the test card and redirects to success_url', async () => {
    const c = await createCreator(kit);
    const session = await kit.stripe.checkout.sessions.create(
      { mode: 'subscription', line_items: [{ price: c.price.id, quantity: 1 }], success_url: 'http://app.test/ok?s={CHECKOUT_SESSION_ID}', subscription_data: { application_fee_percent: 10 } },
      c.opts,
    );
    const pageRes = await fetch(session.url!);
    const html = await pageRes.text();
    expect(pageRes.status).toBe(200);
    expect(html).toContain('Força Total');
    expect(html).toContain('<form method="post">');
    const pay = await fetch(session.url!, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'payment_method=pm_card_visa' });
    expect(pay.status).toBe(303);
    expect(pay.headers.get('location')).toBe(`http://app.test/ok?s=${session.id}`);
    const after = await kit.stripe.checkout.sessions.retrieve(session.id, {}, c.opts);
    expect(after.status).toBe('complete');
    expect((await kit.stripe.subscriptions.retrieve(after.subscription as string, {}, c.opts)).status).toBe('active');
  });
});

describe('idempotency', () => {
  it('replays the stored response for a repeated Idempotency-Key and refuses the key with other parameters', async () => {
    const c = await createCreator(kit);
    const key = `idem-${Date.now()}`;
    const a = await kit.stripe.customers.create({ email: 'same@example.com' }, { ...c.opts, idempotencyKey: key });
    const b = await kit.stripe.customers.create({ email: 'same@example.com' }, { ...c.opts, idempotencyKey: key });
    expect(b.id).toBe(a.id);
    expect(b.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect((await kit.stripe.customers.list({ email: 'same@example.com' }, c.opts)).data).toHaveLength(1);
    await expect(kit.stripe.customers.create({ email: 'other@example.com' }, { ...c.opts, idempotencyKey: key })).rejects.toMatchObject({ type: 'StripeIdempotencyError' });
  });
});
