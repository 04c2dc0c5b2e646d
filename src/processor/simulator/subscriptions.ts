import { collectSubscriptionInvoice, createInvoice, payInvoice, planLine, RETRY_DAYS } from './billing.js';
import { DAY, periodBoundary, type Interval } from './calendar.js';
import { cardDeclined, invalidRequest } from './errors.js';
import { changed, emit } from './events.js';
import { declineMessage, PLATFORM_APPLICATION, type PaymentResult } from './money.js';
import type { Params } from './params.js';
import { changePrice } from './plan-change.js';
import { planOf, setPeriod } from './sub-period.js';
import { applyPendingUpdate, waitsOn } from './pending-update.js';
import { advanceSchedule, managedBy, scheduleOfEndedSubscription } from './schedules.js';
import { takePendingItems } from './invoice-items.js';
import { cancelJobs, findObject, getObject, insertObject, listObjects, newId, saveObject, scheduleJob, type Ctx, type Stored } from './store.js';

export { RETRY_DAYS } from './billing.js';
/** Stripe sends customer.subscription.trial_will_end three days before a trial ends. */
const TRIAL_WILL_END_DAYS = 3;

export interface StartInput {
  customer: Stored;
  price: Stored;
  trialDays: number | null;
  feePercent: number | null;
  metadata: Record<string, string>;
  paymentMethod: string;
}

/**
 * Creates a subscription as Checkout does once the member has paid: trialing with a 0
 * invoice when there is a trial, otherwise active with its first invoice charged. The
 * caller has already checked that the card pays, so a decline here is a logic error.
 */
export async function startSubscription(ctx: Ctx, input: StartInput): Promise<{ sub: Stored; invoice: Stored; payment: PaymentResult | null }> {
  const price = input.price.data;
  const r = price.recurring as { interval: Interval; interval_count: number };
  const trialEnd = input.trialDays ? ctx.now + input.trialDays * DAY : null;
  const anchor = trialEnd ?? ctx.now;
  const periodEnd = trialEnd ?? periodBoundary(anchor, r.interval, r.interval_count, 1);
  const id = newId('sub');
  const sub: any = {
    id,
    object: 'subscription',
    application: input.feePercent ? PLATFORM_APPLICATION : null,
    application_fee_percent: input.feePercent,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: anchor,
    billing_cycle_anchor_config: null,
    billing_mode: { flexible: null, type: 'classic' },
    billing_thresholds: null,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: 'charge_automatically',
    created: ctx.now,
    currency: price.currency,
    customer: input.customer.id,
    customer_account: null,
    days_until_due: null,
    default_payment_method: input.paymentMethod,
    default_source: null,
    description: null,
    discounts: [],
    ended_at: null,
    invoice_settings: { account_tax_ids: null, issuer: { type: 'self' } },
    items: {
      object: 'list',
      data: [{ id: newId('si'), object: 'subscription_item', billing_thresholds: null, created: ctx.now, current_period_end: 0, current_period_start: 0, discounts: [], metadata: {}, plan: planOf(price), price, quantity: 1, subscription: id, tax_rates: [] }],
      has_more: false,
      total_count: 1,
      url: `/v1/subscription_items?subscription=${id}`,
    },
    latest_invoice: null,
    livemode: false,
    metadata: input.metadata,
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: { payment_method_options: null, payment_method_types: null, save_default_payment_method: 'off' },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    plan: planOf(price),
    schedule: null,
    start_date: ctx.now,
    status: trialEnd ? 'trialing' : 'active',
    test_clock: null,
    transfer_data: null,
    trial_end: trialEnd,
    trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } },
    trial_start: trialEnd ? ctx.now : null,
  };
  setPeriod(sub, ctx.now, periodEnd);
  // The first invoice's id is known up front so that, as on Stripe, the subscription's
  // created event (already naming its latest_invoice) precedes the invoice's events.
  sub.latest_invoice = newId('in');
  const stored = await insertObject(ctx, 'subscription', sub, { anchor, cycle: trialEnd ? 0 : 1 });
  await emit(ctx, 'customer.subscription.created', sub);
  const invoice = await createInvoice(ctx, {
    id: sub.latest_invoice, subscription: sub, customer: input.customer, reason: 'subscription_create',
    lines: [await planLine(ctx, price, trialEnd ? 0 : price.unit_amount, ctx.now, periodEnd)], periodStart: ctx.now, periodEnd: ctx.now,
  });
  const payment = trialEnd ? null : await payInvoice(ctx, invoice, sub, input.customer, { paymentMethod: input.paymentMethod });
  if (payment && !payment.succeeded) throw new Error('startSubscription: first payment declined after the card was accepted');
  await scheduleJob(ctx, 'sub_cycle', id, periodEnd);
  if (trialEnd) {
    // A trial of three days or less is already within the warning window: warn right away.
    const warnAt = trialEnd - TRIAL_WILL_END_DAYS * DAY;
    if (warnAt > ctx.now) await scheduleJob(ctx, 'trial_will_end', id, warnAt);
    else await emit(ctx, 'customer.subscription.trial_will_end', sub);
  }
  return { sub: stored, invoice, payment };
}

export async function endSubscription(ctx: Ctx, sub: Stored, at: number): Promise<void> {
  const before = structuredClone(sub.data);
  const d = sub.data;
  d.status = 'canceled';
  d.ended_at = at;
  d.canceled_at = d.canceled_at ?? at;
  d.cancel_at = null;
  if (!d.cancellation_details.reason) d.cancellation_details.reason = 'cancellation_requested';
  await saveObject(ctx, sub);
  await cancelJobs(ctx, sub.id);
  if (d.latest_invoice) await cancelJobs(ctx, d.latest_invoice, ['invoice_retry']);
  if (d.schedule) await scheduleOfEndedSubscription(ctx, sub);
  await emit(ctx, 'customer.subscription.deleted', d, changed(before, d), sub.account);
}

/** Job `trial_will_end`. */
export async function trialWillEnd(ctx: Ctx, subId: string): Promise<void> {
  const sub = await findObject(ctx, subId, { type: 'subscription', forUpdate: true });
  if (sub?.data.status === 'trialing') await emit(ctx, 'customer.subscription.trial_will_end', sub.data);
}

/**
 * Job `sub_cycle`, at the end of the current period (or trial): ends the subscription if
 * it was set to cancel at period end (or its schedule ends with `cancel`); otherwise moves
 * it to its schedule's next phase if one starts now — so the renewal is invoiced at the new
 * price — then opens the next calendar period from the billing anchor, invoices it (with any
 * pending prorations) and charges the card. A decline makes it past_due with retries.
 */
export async function runCycle(ctx: Ctx, subId: string): Promise<void> {
  const sub = await findObject(ctx, subId, { type: 'subscription', forUpdate: true });
  if (!sub || sub.data.status === 'canceled') return;
  const d = sub.data;
  if (d.cancel_at_period_end) return endSubscription(ctx, sub, ctx.now);
  if (d.schedule && (await advanceSchedule(ctx, sub)) === 'cancel') return endSubscription(ctx, sub, ctx.now);
  const before = structuredClone(d);
  const price = d.items.data[0].price;
  const cycle = Number(sub.internal.cycle) + 1;
  const start = d.items.data[0].current_period_end as number;
  const end = periodBoundary(Number(sub.internal.anchor), price.recurring.interval, price.recurring.interval_count, cycle);
  const customer = await getObject(ctx, d.customer, 'customer', { param: 'customer' });
  setPeriod(d, start, end);
  sub.internal.cycle = cycle;
  const id = newId('in');
  const prorations = await takePendingItems(ctx, sub.id, id);
  const invoice = await createInvoice(ctx, {
    id, subscription: d, customer, reason: 'subscription_cycle',
    lines: [...prorations, await planLine(ctx, price, price.unit_amount, start, end)], periodStart: before.items.data[0].current_period_start, periodEnd: start,
  });
  await collectSubscriptionInvoice(ctx, sub, invoice, customer);
  await saveObject(ctx, sub);
  await emit(ctx, 'customer.subscription.updated', d, changed(before, d));
  await scheduleJob(ctx, 'sub_cycle', sub.id, end);
}

/** Job `invoice_retry`: attempt N of RETRY_DAYS; the last failure cancels the subscription. */
export async function retryInvoice(ctx: Ctx, invoiceId: string, payload: { subscription: string; attempt: number }): Promise<void> {
  const invoice = await findObject(ctx, invoiceId, { type: 'invoice', forUpdate: true });
  const sub = await findObject(ctx, payload.subscription, { type: 'subscription', forUpdate: true });
  if (!invoice || !sub || invoice.data.status !== 'open' || sub.data.status === 'canceled') return;
  const customer = await getObject(ctx, sub.data.customer, 'customer', { param: 'customer' });
  const next = RETRY_DAYS[payload.attempt];
  const firstFailure = invoice.data.created;
  const payment = await payAgain(ctx, invoice, sub, customer, next ? firstFailure + next * DAY : null);
  if (!payment.succeeded && payload.attempt >= RETRY_DAYS.length) {
    sub.data.cancellation_details.reason = 'payment_failed';
    await endSubscription(ctx, sub, ctx.now);
  }
}

/**
 * Charges an open subscription invoice again (a scheduled retry, at once when the customer
 * sets a new card, or `POST /v1/invoices/{id}/pay`). Paid: the remaining retries are dropped, a
 * pending update waiting on this invoice is applied, and a past_due subscription is active
 * again. Declined: the invoice shows `nextAttempt` as its next try.
 */
export async function payAgain(ctx: Ctx, invoice: Stored, sub: Stored, customer: Stored, nextAttempt: number | null): Promise<PaymentResult> {
  const payment = await payInvoice(ctx, invoice, sub.data, customer, { nextAttempt });
  if (payment.succeeded) {
    await cancelJobs(ctx, invoice.id, ['invoice_retry']);
    if (waitsOn(sub, invoice.id)) await applyPendingUpdate(ctx, sub);
    if (sub.data.status === 'past_due') {
      const before = structuredClone(sub.data);
      sub.data.status = 'active';
      await saveObject(ctx, sub);
      await emit(ctx, 'customer.subscription.updated', sub.data, changed(before, sub.data));
    }
  }
  return payment;
}

/**
 * POST /v1/invoices/{id}/pay: charges an open subscription invoice now (payAgain). Declined:
 * Stripe's 402 card error, and — unlike Stripe, which records the failed attempt — nothing changes.
 */
export async function payOpenInvoice(ctx: Ctx, id: string): Promise<unknown> {
  const invoice = await getObject(ctx, id, 'invoice', { param: 'invoice' });
  if (invoice.data.status === 'paid') throw invalidRequest('Invoice is already paid', 'invoice', 'invoice_already_paid');
  if (invoice.data.status !== 'open') throw invalidRequest(`You can only pay open invoices. This invoice (${id}) is ${invoice.data.status}.`, 'invoice');
  const subId = invoice.data.parent?.subscription_details?.subscription;
  const sub = subId ? await findObject(ctx, subId, { type: 'subscription', forUpdate: true }) : undefined;
  if (!sub || sub.data.status === 'canceled') throw invalidRequest('The simulator pays only invoices of a live subscription.', 'invoice');
  const customer = await getObject(ctx, sub.data.customer, 'customer', { param: 'customer' });
  const payment = await payAgain(ctx, invoice, sub, customer, invoice.data.next_payment_attempt);
  if (!payment.succeeded) {
    const code = payment.declineCode ?? 'generic_decline';
    throw cardDeclined(code, declineMessage(code));
  }
  return invoice.data;
}

export async function retrieveSubscription(ctx: Ctx, id: string): Promise<unknown> {
  return (await getObject(ctx, id, 'subscription', { param: 'id' })).data;
}

export async function updateSubscription(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const sub = await getObject(ctx, id, 'subscription', { param: 'id' });
  const d = sub.data;
  if (d.status === 'canceled' && (p.has('cancel_at_period_end') || p.has('default_payment_method') || p.has('items'))) {
    throw invalidRequest('A canceled subscription can only update its cancellation_details and metadata.', 'cancel_at_period_end');
  }
  const before = structuredClone(d);
  const cape = p.bool('cancel_at_period_end');
  if (cape !== undefined && d.schedule) throw managedBy(d.schedule, 'cancelation behavior');
  if (p.has('items')) {
    if (d.schedule) throw managedBy(d.schedule, 'items');
    await changePrice(ctx, sub, p);
  }
  if (cape !== undefined && cape !== d.cancel_at_period_end) {
    d.cancel_at_period_end = cape;
    d.cancel_at = cape ? d.items.data[0].current_period_end : null;
    d.canceled_at = cape ? ctx.now : null;
    d.cancellation_details.reason = cape ? 'cancellation_requested' : null;
  }
  if (p.has('cancellation_details[comment]')) d.cancellation_details.comment = p.str('cancellation_details[comment]') || null;
  if (p.has('cancellation_details[feedback]')) d.cancellation_details.feedback = p.str('cancellation_details[feedback]') || null;
  const pm = p.str('default_payment_method');
  if (pm) d.default_payment_method = pm;
  d.metadata = p.metadata(d.metadata);
  await saveObject(ctx, sub);
  const prev = changed(before, d);
  if (Object.keys(prev).length) await emit(ctx, 'customer.subscription.updated', d, prev);
  return d;
}

/** DELETE /v1/subscriptions/:id — ends it now. */
export async function cancelSubscription(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const sub = await getObject(ctx, id, 'subscription', { param: 'id' });
  if (sub.data.status === 'canceled') throw invalidRequest(`No such subscription: '${id}' is already canceled.`, 'subscription', 'resource_missing');
  if (p.has('cancellation_details[comment]')) sub.data.cancellation_details.comment = p.str('cancellation_details[comment]') || null;
  sub.data.canceled_at = ctx.now;
  sub.data.cancellation_details.reason = 'cancellation_requested';
  await endSubscription(ctx, sub, ctx.now);
  return sub.data;
}

/** By default Stripe lists every subscription except canceled ones; `status=all` includes them. */
export function listSubscriptions(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  const customer = p.str('customer');
  if (customer) where.push([['customer'], customer]);
  const price = p.str('price');
  if (price) where.push([['items', 'data', '0', 'price', 'id'], price]);
  const status = p.enumOf('status', ['active', 'all', 'canceled', 'ended', 'incomplete', 'incomplete_expired', 'past_due', 'paused', 'trialing', 'unpaid'] as const);
  if (status && status !== 'all' && status !== 'ended') where.push([['status'], status]);
  const filter =
    status === 'ended' ? (s: any) => s.status === 'canceled' || s.status === 'incomplete_expired'
    : !status ? (s: any) => s.status !== 'canceled' && s.status !== 'incomplete_expired'
    : undefined;
  return listObjects(ctx, 'subscription', p, { url: '/v1/subscriptions', where, ...(filter ? { filter } : {}) });
}
