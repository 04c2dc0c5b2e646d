import { cardDeclined, invalidRequest, missingParam } from './errors.js';
import { emit } from './events.js';
import { createCustomerRecord, declineCodeOf, getCustomer, isDeclining } from './customers.js';
import { declineMessage } from './money.js';
import type { Params } from './params.js';
import { cancelJobs, findObject, getObject, insertObject, listObjects, newId, saveObject, scheduleJob, type Ctx, type Stored } from './store.js';
import { startSubscription } from './subscriptions.js';

const DEFAULT_EXPIRY = 24 * 3600;

/**
 * POST /v1/checkout/sessions — subscription mode, one recurring price (what a paid
 * community sells). The member pays on the simulator's hosted page at `url`, or a test
 * calls the complete helper.
 */
export async function createSession(ctx: Ctx, p: Params): Promise<unknown> {
  const mode = p.enumOf('mode', ['payment', 'setup', 'subscription'] as const);
  if (!mode) throw missingParam('mode');
  if (mode !== 'subscription') throw invalidRequest('The simulator supports Checkout in subscription mode only.', 'mode');
  if (ctx.account) {
    // A direct charge on a connected account needs charges enabled (onboarded, nothing past due).
    const account = await getObject(ctx, ctx.account, 'account', { account: '' });
    if (account.data.charges_enabled === false) {
      throw invalidRequest(
        `The account ${account.id} cannot currently make charges: it has not completed onboarding or has requirements past due (requirements.disabled_reason: ${account.data.requirements?.disabled_reason ?? 'none'}).`,
      );
    }
  }
  const successUrl = p.reqStr('success_url');
  const items = p.list('line_items');
  if (!items?.length) throw missingParam('line_items');
  if (items.length > 1) throw invalidRequest('The simulator supports one line item per Checkout Session.', 'line_items');
  const priceId = p.str('line_items[0][price]');
  if (!priceId) throw missingParam('line_items[0][price]');
  const quantity = p.int('line_items[0][quantity]', { min: 1 }) ?? 1;
  if (quantity !== 1) throw invalidRequest('The simulator supports quantity 1 only.', 'line_items[0][quantity]');
  const price = await getObject(ctx, priceId, 'price', { param: 'line_items[0][price]' });
  if (!price.data.active) throw invalidRequest(`The price specified is inactive. This field only accepts active prices.`, 'line_items[0][price]');
  if (!price.data.recurring) throw invalidRequest('You must provide at least one recurring price in `subscription` mode when using prices.', 'line_items[0][price]');
  const customerId = p.str('customer');
  const customer = customerId ? await getCustomer(ctx, customerId, 'customer') : undefined;
  const customerEmail = p.str('customer_email') || null;
  if (customer && customerEmail) throw invalidRequest('You may only specify one of these parameters: customer, customer_email.', 'customer_email');
  const trialDays = p.int('subscription_data[trial_period_days]', { min: 1, max: 730 }) ?? null;
  const feePercent = p.decimal('subscription_data[application_fee_percent]') ?? null;
  if (feePercent !== null && (feePercent < 0 || feePercent > 100)) {
    throw invalidRequest('application_fee_percent must be between 0 and 100.', 'subscription_data[application_fee_percent]');
  }
  if (feePercent !== null && !ctx.account) {
    throw invalidRequest('application_fee_percent requires a Stripe-Account header (a direct charge on a connected account).', 'subscription_data[application_fee_percent]');
  }
  const expiresAt = p.int('expires_at') ?? ctx.now + DEFAULT_EXPIRY;
  if (expiresAt < ctx.now + 1800 || expiresAt > ctx.now + DEFAULT_EXPIRY) throw invalidRequest('expires_at must be between 30 minutes and 24 hours from now.', 'expires_at');
  const id = newId('cs_test', 58);
  const amount = price.data.unit_amount as number;
  const data = {
    id,
    object: 'checkout.session',
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: amount,
    amount_total: amount,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    cancel_url: p.str('cancel_url') ?? null,
    client_reference_id: p.str('client_reference_id') || null,
    client_secret: null,
    consent: null,
    created: ctx.now,
    currency: price.data.currency,
    custom_fields: [],
    customer: customer?.id ?? null,
    customer_creation: customer ? null : 'always',
    customer_details: customer ? { address: null, email: customer.data.email, name: customer.data.name, phone: null, tax_exempt: 'none', tax_ids: [] } : null,
    customer_email: customerEmail,
    expires_at: expiresAt,
    invoice: null as string | null,
    livemode: false,
    locale: p.str('locale') ?? null,
    metadata: p.metadata(),
    mode,
    payment_intent: null,
    payment_link: null,
    payment_method_collection: 'always',
    payment_method_types: ['card'],
    payment_status: 'unpaid',
    recovered_from: null,
    setup_intent: null,
    status: 'open',
    submit_type: null,
    subscription: null as string | null,
    success_url: successUrl,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted',
    url: `${ctx.env.baseUrl}/c/pay/${id}`,
  };
  const subData = p.child('subscription_data');
  await insertObject(ctx, 'checkout.session', data, {
    lineItems: [{ price: price.id, quantity }],
    trialDays,
    feePercent,
    subscriptionMetadata: subData ? subData.metadata() : {},
  });
  await scheduleJob(ctx, 'session_expire', id, expiresAt);
  return data;
}

export async function retrieveSession(ctx: Ctx, id: string): Promise<unknown> {
  return (await getObject(ctx, id, 'checkout.session', { noun: 'checkout.session', param: 'session' })).data;
}

export function listSessions(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  for (const k of ['customer', 'subscription', 'status', 'payment_intent'] as const) {
    const v = p.str(k);
    if (v) where.push([[k], v]);
  }
  return listObjects(ctx, 'checkout.session', p, { url: '/v1/checkout/sessions', where });
}

/** `line_items` as Stripe renders them (the list endpoint and `expand[]=line_items`). */
export async function sessionLineItems(ctx: Ctx, session: Stored): Promise<unknown> {
  const data = [];
  for (const li of session.internal.lineItems as Array<{ price: string; quantity: number }>) {
    const price = await findObject(ctx, li.price, { type: 'price', account: session.account });
    const product = price ? await findObject(ctx, price.data.product, { type: 'product', account: session.account }) : undefined;
    const amount = (price?.data.unit_amount ?? 0) * li.quantity;
    data.push({
      id: `li_${session.id.slice(8, 32)}`,
      object: 'item',
      amount_discount: 0,
      amount_subtotal: amount,
      amount_tax: 0,
      amount_total: amount,
      currency: price?.data.currency,
      description: product?.data.name ?? null,
      metadata: {},
      price: price?.data ?? null,
      quantity: li.quantity,
    });
  }
  return { object: 'list', data, has_more: false, url: `/v1/checkout/sessions/${session.id}/line_items` };
}

export interface CompleteInput {
  paymentMethod: string;
  email?: string | undefined;
  name?: string | undefined;
}

/**
 * The member pays. A declining card (or a customer set to fail) is a 402 card_error and
 * changes nothing — the session stays open, no subscription exists. Otherwise the customer
 * (created if the session had none), the subscription, its first invoice and payment are
 * created and `checkout.session.completed` is emitted last, as on Stripe.
 */
export async function completeSession(ctx: Ctx, session: Stored, input: CompleteInput): Promise<unknown> {
  const s = session.data;
  if (s.status !== 'open') throw invalidRequest(`This Checkout Session is ${s.status} and can no longer be paid.`, 'session', 'checkout_session_not_open');
  if (s.expires_at <= ctx.now) throw invalidRequest('This Checkout Session has expired.', 'session', 'checkout_session_expired');
  const existing = s.customer ? await getCustomer(ctx, s.customer, 'customer') : undefined;
  if (isDeclining(input.paymentMethod) || existing?.internal.fail) {
    const code = isDeclining(input.paymentMethod) ? declineCodeOf(input.paymentMethod) : (existing?.internal.declineCode ?? 'generic_decline');
    throw cardDeclined(code, declineMessage(code));
  }
  const customer =
    existing ??
    (await createCustomerRecord(ctx, {
      email: input.email ?? s.customer_email ?? `member-${session.id.slice(8, 16).toLowerCase()}@example.com`,
      name: input.name ?? null,
      paymentMethod: input.paymentMethod,
    }));
  const li = (session.internal.lineItems as Array<{ price: string }>)[0]!;
  const price = await getObject(ctx, li.price, 'price', { param: 'line_items' });
  const { sub, invoice } = await startSubscription(ctx, {
    customer,
    price,
    trialDays: session.internal.trialDays ?? price.data.recurring?.trial_period_days ?? null,
    feePercent: session.internal.feePercent ?? null,
    metadata: session.internal.subscriptionMetadata ?? {},
    paymentMethod: input.paymentMethod,
  });
  Object.assign(s, {
    status: 'complete',
    payment_status: sub.data.status === 'trialing' ? 'no_payment_required' : 'paid',
    customer: customer.id,
    customer_details: { address: null, email: customer.data.email, name: customer.data.name, phone: null, tax_exempt: 'none', tax_ids: [] },
    subscription: sub.id,
    invoice: invoice.id,
    url: null,
  });
  await saveObject(ctx, session);
  await cancelJobs(ctx, session.id, ['session_expire']);
  await emit(ctx, 'checkout.session.completed', s);
  return s;
}

/** POST /v1/checkout/sessions/:id/expire and the `session_expire` job. */
export async function expireSession(ctx: Ctx, session: Stored, strict: boolean): Promise<unknown> {
  if (session.data.status !== 'open') {
    if (strict) throw invalidRequest(`Only open Checkout Sessions can be expired; this one is ${session.data.status}.`, 'session');
    return session.data;
  }
  Object.assign(session.data, { status: 'expired', url: null });
  await saveObject(ctx, session);
  await cancelJobs(ctx, session.id, ['session_expire']);
  await emit(ctx, 'checkout.session.expired', session.data);
  return session.data;
}
