import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribed, type Creator, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

const configure = (c: Creator, extra: Stripe.BillingPortal.ConfigurationCreateParams['features'] = {}) =>
  kit.stripe.billingPortal.configurations.create(
    {
      business_profile: { headline: 'Força Total <members>' },
      features: {
        payment_method_update: { enabled: true },
        invoice_history: { enabled: true },
        subscription_cancel: { enabled: true, mode: 'at_period_end' },
        ...extra,
      },
    },
    c.opts,
  );

const html = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, { redirect: 'manual', ...init });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
};
const post = (url: string, form: Record<string, string>) =>
  html(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });

describe('billing portal API', () => {
  it('without a configuration and with no default one, a session is refused with Stripe\'s 400', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const sub = await subscribed(kit, c);
    await expect(kit.stripe.billingPortal.sessions.create({ customer: sub.customer as string, return_url: 'http://app.test/back' }, c.opts)).rejects.toMatchObject({
      statusCode: 400,
      type: 'StripeInvalidRequestError',
      message: expect.stringMatching(/^No configuration provided and your test mode default configuration has not been created\./),
    });
  });

  it('the first configuration is the default; sessions are made on the caller\'s account for its customers only', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const first = await configure(c);
    const second = await configure(c, { subscription_cancel: { enabled: false } });
    expect(first).toMatchObject({ object: 'billing_portal.configuration', is_default: true, active: true, business_profile: { headline: 'Força Total <members>' } });
    expect(first.features).toMatchObject({ payment_method_update: { enabled: true }, invoice_history: { enabled: true }, subscription_cancel: { enabled: true, mode: 'at_period_end' } });
    expect(second.is_default).toBe(false);
    expect((await kit.stripe.billingPortal.configurations.list({}, c.opts)).data.map((x) => x.id)).toEqual([second.id, first.id]);
    expect((await kit.stripe.billingPortal.configurations.retrieve(second.id, {}, c.opts)).features.subscription_cancel.enabled).toBe(false);
    const session = await kit.stripe.billingPortal.sessions.create({ customer: sub.customer as string, return_url: 'http://app.test/back' }, c.opts);
    expect(session).toMatchObject({ object: 'billing_portal.session', customer: sub.customer, configuration: first.id, return_url: 'http://app.test/back', livemode: false });
    expect(session.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/p\/session\/bps_/);
    const chosen = await kit.stripe.billingPortal.sessions.create({ customer: sub.customer as string, return_url: 'http://app.test/back', configuration: second.id }, c.opts);
    expect(chosen.configuration).toBe(second.id);
    const other = await createCreator(kit, { schedule: 'manual' });
    await configure(other);
    await expect(kit.stripe.billingPortal.sessions.create({ customer: sub.customer as string, return_url: 'http://app.test/back' }, other.opts)).rejects.toMatchObject({
      statusCode: 404, message: `No such customer: '${sub.customer}'`,
    });
  });
});

describe('hosted portal page', () => {
  it('shows the customer\'s subscription, card and invoices with links, escaped, and a Return link; the link dies after an hour', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const sub = await subscribed(kit, c);
    await configure(c);
    const session = await kit.stripe.billingPortal.sessions.create({ customer: sub.customer as string, return_url: 'http://app.test/back?a=1&b=2' }, c.opts);
    const invoice = await kit.stripe.invoices.retrieve(sub.latest_invoice as string, {}, c.opts);
    const page = await html(session.url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Força Total &lt;members&gt;');
    expect(page.text).toContain('Força Total</strong> — 29.99 USD per month — <span class="status">active</span>');
    expect(page.text).toContain(`renews ${new Date(sub.items.data[0]!.current_period_end * 1000).toISOString().slice(0, 10)}`);
    expect(page.text).toContain('Visa •••• 4242');
    expect(page.text).toContain(`<a href="/invoices/${invoice.id}">${invoice.number}</a>`);
    expect(page.text).toContain('29.99 USD — paid');
    expect(page.text).toContain('<a href="http://app.test/back?a=1&amp;b=2">Return</a>');
    expect((await html(`${kit.sim.url}/invoices/${invoice.id}`)).status).toBe(200);
    await kit.advance(3601);
    expect((await html(session.url)).status).toBe(404);
  });

  it('a past_due member updates the card in the portal and the same subscription is active again with its invoice paid', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const sub = await subscribed(kit, c);
    await configure(c);
    await kit.helper(`/v1/test_helpers/customers/${sub.customer}/payment_behavior`, { fail: true });
    await kit.advance(sub.items.data[0]!.current_period_end - (await kit.now()) + 60);
    const pastDue = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    expect(pastDue.status).toBe('past_due');
    const session = await kit.stripe.billingPortal.sessions.create({ customer: sub.customer as string, return_url: 'http://app.test/back' }, c.opts);
    expect((await html(session.url)).text).toContain('Visa •••• 0002');
    const updated = await post(`${session.url}/card`, { payment_method: 'pm_card_visa' });
    expect(updated).toMatchObject({ status: 303, location: `/p/session/${session.id}?done=card` });
    expect((await html(`${kit.sim.url}${updated.location}`)).text).toContain('Your card was updated.');
    const healed = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(healed).toMatchObject({ id: sub.id, status: 'active' });
    expect(healed.latest_invoice).toMatchObject({ id: pastDue.latest_invoice, status: 'paid', attempt_count: 2, amount_paid: 2999 });
    const customer = (await kit.stripe.customers.retrieve(sub.customer as string, {}, c.opts)) as Stripe.Customer;
    expect(customer.invoice_settings.default_payment_method).toBe('pm_card_visa');
    expect(kit.receiver.ofType('invoice.paid', (i) => i.id === pastDue.latest_invoice)).toHaveLength(1);
    expect(kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id && s.status === 'active').length).toBeGreaterThan(0);
    // The retries scheduled for the failed renewal are gone: nothing more is charged.
    await kit.advance(8 * DAY);
    expect((await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts)).data.filter((ch) => ch.status === 'succeeded')).toHaveLength(2);
  });

  it('Cancel sets cancel_at_period_end through the API\'s rules, and a configuration without cancel offers no Cancel', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const sub = await subscribed(kit, c);
    await configure(c);
    const session = await kit.stripe.billingPortal.sessions.create({ customer: sub.customer as string, return_url: 'http://app.test/back' }, c.opts);
    expect((await html(session.url)).text).toContain('<button>Cancel</button>');
    const canceled = await post(`${session.url}/cancel`, { subscription: sub.id });
    expect(canceled.status).toBe(303);
    expect(await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).toMatchObject({ status: 'active', cancel_at_period_end: true });
    const after = await html(session.url);
    expect(after.text).toContain('cancels at period end');
    expect(after.text).not.toContain('<button>Cancel</button>');
    await expect.poll(() => kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id && s.cancel_at_period_end).length).toBe(1);

    const noCancel = await configure(c, { subscription_cancel: { enabled: false } });
    const other = await subscribed(kit, c);
    const limited = await kit.stripe.billingPortal.sessions.create({ customer: other.customer as string, return_url: 'http://app.test/back', configuration: noCancel.id }, c.opts);
    expect((await html(limited.url)).text).not.toContain('<button>Cancel</button>');
    expect((await post(`${limited.url}/cancel`, { subscription: other.id })).status).toBe(400);
    expect((await kit.stripe.subscriptions.retrieve(other.id, {}, c.opts)).cancel_at_period_end).toBe(false);
  });
});
