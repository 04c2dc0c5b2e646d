import { DAY } from './calendar.js';
import { emit } from './events.js';
import { attemptPayment, PLATFORM_APPLICATION, type PaymentResult } from './money.js';
import type { Params } from './params.js';
import { getObject, insertObject, listObjects, newId, saveObject, scheduleJob, type Ctx, type Stored } from './store.js';

/** One invoice line: the subscription's price for a period, or a proration from an invoice item. */
export interface LineSpec {
  amount: number;
  description: string;
  price: any;
  start: number;
  end: number;
  /** The invoice item a proration line comes from. */
  invoiceItem?: string | null;
  proration?: boolean;
  /** Stripe's proration_details.credited_items: the invoice line a credit refers to. */
  credited?: { invoice: string; invoice_line_items: string[] } | null;
}

export interface InvoiceSpec {
  /** Pre-allocated id (a new subscription names its first invoice before it exists). */
  id?: string;
  subscription: any;
  customer: Stored;
  reason: 'subscription_create' | 'subscription_cycle' | 'subscription_update';
  lines: LineSpec[];
  /** Stripe's invoice.period_*: the period that just ended (= creation time for a first or update invoice). */
  periodStart: number;
  periodEnd: number;
}

/** The line billing one period of `price` (a trial's first invoice bills it at 0). */
export async function planLine(ctx: Ctx, price: any, amount: number, start: number, end: number): Promise<LineSpec> {
  const product = await getObject(ctx, price.product, 'product', { param: 'price' });
  const r = price.recurring;
  const every = r ? (r.interval_count === 1 ? ` / ${r.interval}` : ` every ${r.interval_count} ${r.interval}s`) : '';
  const description = `1 × ${product.data.name} (at ${(price.unit_amount / 100).toFixed(2)} ${price.currency.toUpperCase()}${every})`;
  return { amount, description, price, start, end };
}

function lineItem(invoiceId: string, sub: any, l: LineSpec) {
  return {
    id: newId('il'),
    object: 'line_item',
    amount: l.amount,
    currency: l.price.currency,
    description: l.description,
    discount_amounts: [],
    discountable: !l.proration,
    discounts: [],
    invoice: invoiceId,
    livemode: false,
    metadata: {},
    parent: {
      type: 'subscription_item_details',
      invoice_item_details: null,
      subscription_item_details: {
        invoice_item: l.invoiceItem ?? null,
        proration: Boolean(l.proration),
        proration_details: { credited_items: l.credited ?? null },
        subscription: sub.id,
        subscription_item: sub.items.data[0].id,
      },
    },
    period: { end: l.end, start: l.start },
    pricing: { price_details: { price: l.price.id, product: l.price.product }, type: 'price_details', unit_amount_decimal: String(l.amount) },
    quantity: 1,
    subtotal: l.amount,
    taxes: [],
  };
}

/**
 * Drafts and finalizes a subscription invoice (Stripe waits ~1 h before finalizing; the
 * simulator does not). Finalizing applies the customer's balance as Stripe does: a credit
 * (negative balance) lowers the amount due, and a negative total leaves its credit there.
 */
export async function createInvoice(ctx: Ctx, spec: InvoiceSpec): Promise<Stored> {
  const { subscription: sub, customer } = spec;
  const id = spec.id ?? newId('in');
  const seq = customer.data.next_invoice_sequence ?? 1;
  const total = spec.lines.reduce((sum, l) => sum + l.amount, 0);
  const startingBalance: number = customer.data.balance ?? 0;
  const endingBalance = Math.min(0, total + startingBalance);
  const amountDue = Math.max(0, total + startingBalance);
  const customerBefore = structuredClone(customer.data);
  customer.data.next_invoice_sequence = seq + 1;
  customer.data.balance = endingBalance;
  await saveObject(ctx, customer);
  if (endingBalance !== startingBalance) await emit(ctx, 'customer.updated', customer.data, { balance: customerBefore.balance });
  const lines = spec.lines.map((l) => lineItem(id, sub, l));
  const data = {
    id,
    object: 'invoice',
    account_country: 'US',
    account_name: null,
    amount_due: amountDue,
    amount_overpaid: 0,
    amount_paid: 0,
    amount_remaining: amountDue,
    amount_shipping: 0,
    application: sub.application_fee_percent ? PLATFORM_APPLICATION : null,
    attempt_count: 0,
    attempted: false,
    auto_advance: true,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    billing_reason: spec.reason,
    collection_method: 'charge_automatically',
    created: ctx.now,
    currency: sub.currency,
    customer: customer.id,
    customer_email: customer.data.email,
    customer_name: customer.data.name,
    default_payment_method: null,
    description: null,
    discounts: [],
    due_date: null,
    effective_at: ctx.now,
    ending_balance: endingBalance,
    hosted_invoice_url: `${ctx.env.baseUrl}/invoices/${id}`,
    invoice_pdf: null,
    lines: { object: 'list', data: lines, has_more: false, total_count: lines.length, url: `/v1/invoices/${id}/lines` },
    livemode: false,
    metadata: {},
    next_payment_attempt: null as number | null,
    number: `${customer.data.invoice_prefix}-${String(seq).padStart(4, '0')}`,
    parent: { quote_details: null, subscription_details: { metadata: sub.metadata, subscription: sub.id }, type: 'subscription_details' },
    payments: { object: 'list', data: [] as any[], has_more: false, total_count: 0, url: `/v1/invoice_payments?invoice=${id}` },
    period_end: spec.periodEnd,
    period_start: spec.periodStart,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    starting_balance: startingBalance,
    statement_descriptor: null,
    status: 'open',
    status_transitions: { finalized_at: ctx.now, marked_uncollectible_at: null, paid_at: null as number | null, voided_at: null },
    subtotal: total,
    subtotal_excluding_tax: total,
    test_clock: null,
    total,
    total_discount_amounts: [],
    total_excluding_tax: total,
    total_pretax_credit_amounts: [],
    total_taxes: [],
    webhooks_delivered_at: ctx.now,
  };
  const stored = await insertObject(ctx, 'invoice', data);
  await emit(ctx, 'invoice.created', { ...data, status: 'draft', status_transitions: { ...data.status_transitions, finalized_at: null } });
  await emit(ctx, 'invoice.finalized', data);
  if (amountDue === 0) await markPaid(ctx, stored, null);
  return stored;
}

async function markPaid(ctx: Ctx, invoice: Stored, payment: PaymentResult | null): Promise<void> {
  const d = invoice.data;
  d.status = 'paid';
  d.amount_paid = d.amount_due;
  d.amount_remaining = 0;
  d.next_payment_attempt = null;
  d.status_transitions.paid_at = ctx.now;
  if (payment) {
    d.payments.data.unshift({
      id: newId('inpay'),
      object: 'invoice_payment',
      amount_paid: d.amount_due,
      amount_requested: d.amount_due,
      created: ctx.now,
      currency: d.currency,
      invoice: d.id,
      is_default: true,
      livemode: false,
      payment: { payment_intent: payment.paymentIntent.id, type: 'payment_intent' },
      status: 'paid',
      status_transitions: { canceled_at: null, paid_at: ctx.now },
    });
    d.payments.total_count = d.payments.data.length;
  }
  await saveObject(ctx, invoice);
  await emit(ctx, 'invoice.paid', d);
  await emit(ctx, 'invoice.payment_succeeded', d);
}

/**
 * Charges an open invoice to the customer's card. On failure the invoice stays open with
 * its attempt counted; `nextAttempt` is the retry time the caller has scheduled (or null).
 */
export async function payInvoice(
  ctx: Ctx,
  invoice: Stored,
  sub: any,
  customer: Stored,
  opts: { paymentMethod?: string | null; decline?: string; nextAttempt?: number | null } = {},
): Promise<PaymentResult> {
  const d = invoice.data;
  const result = await attemptPayment(ctx, {
    customer,
    amount: d.amount_due,
    currency: d.currency,
    description: d.billing_reason === 'subscription_create' ? 'Subscription creation' : 'Subscription update',
    feePercent: sub.application_fee_percent,
    paymentMethod: opts.paymentMethod ?? sub.default_payment_method,
    decline: opts.decline,
  });
  d.attempt_count += 1;
  d.attempted = true;
  if (result.succeeded) {
    await markPaid(ctx, invoice, result);
  } else {
    d.next_payment_attempt = opts.nextAttempt ?? null;
    await saveObject(ctx, invoice);
    await emit(ctx, 'invoice.payment_failed', d);
  }
  return result;
}

/** Smart-retry schedule of this model: days after the first failed attempt (DESIGN §6). */
export const RETRY_DAYS = [3, 5, 7] as const;

/**
 * Charges a subscription's new invoice (a renewal or a plan change invoiced at once) and
 * sets the subscription's status from the outcome: active when paid, past_due with the
 * retries scheduled when declined. The caller saves the subscription and emits its update.
 */
export async function collectSubscriptionInvoice(ctx: Ctx, sub: Stored, invoice: Stored, customer: Stored): Promise<PaymentResult | null> {
  const d = sub.data;
  d.latest_invoice = invoice.id;
  if (invoice.data.status === 'paid') {
    // Paid at finalization (nothing due after the customer's credit): a trial ending this way is active.
    if (d.status === 'trialing') d.status = 'active';
    return null;
  }
  const payment = await payInvoice(ctx, invoice, d, customer, { nextAttempt: ctx.now + RETRY_DAYS[0] * DAY });
  if (payment.succeeded) {
    d.status = 'active';
  } else {
    d.status = 'past_due';
    for (const [i, days] of RETRY_DAYS.entries()) {
      await scheduleJob(ctx, 'invoice_retry', invoice.id, ctx.now + days * DAY, { subscription: sub.id, attempt: i + 1 });
    }
  }
  return payment;
}

export async function retrieveInvoice(ctx: Ctx, id: string): Promise<unknown> {
  return (await getObject(ctx, id, 'invoice', { param: 'id' })).data;
}

export function listInvoices(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  const sub = p.str('subscription');
  if (sub) where.push([['parent', 'subscription_details', 'subscription'], sub]);
  for (const k of ['customer', 'status'] as const) {
    const v = p.str(k);
    if (v) where.push([[k], v]);
  }
  return listObjects(ctx, 'invoice', p, { url: '/v1/invoices', where });
}

export function listInvoicePayments(ctx: Ctx, p: Params) {
  const invoice = p.str('invoice');
  return listObjects(ctx, 'invoice', p, {
    url: '/v1/invoice_payments',
    ...(invoice ? { where: [[['id'], invoice]] } : {}),
  }).then((list) => ({ ...list, data: list.data.flatMap((inv: any) => inv.payments.data), url: '/v1/invoice_payments' }));
}
