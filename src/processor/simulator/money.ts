import { sql } from 'kysely';
import { DAY } from './calendar.js';
import { emit } from './events.js';
import { splitFee } from './fees.js';
import type { Params } from './params.js';
import { declineCodeOf } from './customers.js';
import { findObject, getObject, insertObject, listObjects, newId, tbl, type Ctx, type Stored } from './store.js';

/** Days a charge's net stays pending before it can be paid out (DESIGN §7). */
export const AVAILABLE_AFTER_DAYS = 7;

/** The platform's Connect application, as named on application fees. */
export const PLATFORM_APPLICATION = 'ca_TribesSimPlatform';

const DECLINE_MESSAGES: Record<string, string> = {
  generic_decline: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  expired_card: 'Your card has expired.',
};
export const declineMessage = (code: string): string => DECLINE_MESSAGES[code] ?? 'Your card was declined.';

export interface BalanceTxnInput {
  amount: number;
  fee: number;
  currency: string;
  type: string;
  reportingCategory: string;
  source: string | null;
  description: string | null;
  availableOn: number;
  account?: string;
}

/** Every movement of money on an account is a balance transaction; balances are their sums. */
export async function recordBalanceTxn(ctx: Ctx, t: BalanceTxnInput): Promise<string> {
  const data = {
    id: newId('txn'),
    object: 'balance_transaction',
    amount: t.amount,
    available_on: t.availableOn,
    balance_type: 'payments',
    created: ctx.now,
    currency: t.currency,
    description: t.description,
    exchange_rate: null,
    fee: t.fee,
    fee_details: t.fee ? [{ amount: t.fee, application: PLATFORM_APPLICATION, currency: t.currency, description: 'Application fee', type: 'application_fee' }] : [],
    net: t.amount - t.fee,
    reporting_category: t.reportingCategory,
    source: t.source,
    type: t.type,
  };
  await insertObject(ctx, 'balance_transaction', data, {}, t.account ?? ctx.account);
  return data.id;
}

export interface PaymentInput {
  customer: Stored;
  amount: number;
  currency: string;
  description: string;
  /** Subscription's application_fee_percent; null means no platform fee (Stripe's default). */
  feePercent: number | null;
  paymentMethod: string | null;
  /** A decline code forced by the card used (Checkout with a declining test card). */
  decline?: string | undefined;
}

export interface PaymentResult {
  succeeded: boolean;
  charge: any;
  paymentIntent: any;
  declineCode: string | null;
}

/**
 * One card payment: a PaymentIntent with its Charge. A success credits the connected
 * account gross − fee (pending for 7 days) and the platform the application fee; a
 * failure leaves only the failed objects and their events.
 */
export async function attemptPayment(ctx: Ctx, input: PaymentInput): Promise<PaymentResult> {
  const { customer, amount, currency } = input;
  const declineCode = input.decline ?? (customer.internal.fail ? (customer.internal.declineCode ?? declineCodeOf(input.paymentMethod)) : null);
  const succeeded = declineCode === null;
  const piId = newId('pi');
  const chId = newId('ch');
  const pm = input.paymentMethod ?? customer.data.invoice_settings?.default_payment_method ?? 'pm_card_visa';
  const fee = succeeded && input.feePercent && ctx.account ? splitFee(amount, input.feePercent).feeCents : 0;
  const availableOn = ctx.now + AVAILABLE_AFTER_DAYS * DAY;
  let feeId: string | null = null;
  let btId: string | null = null;
  if (succeeded) {
    btId = await recordBalanceTxn(ctx, { amount, fee, currency, type: 'charge', reportingCategory: 'charge', source: chId, description: input.description, availableOn });
    if (fee > 0) feeId = await recordApplicationFee(ctx, { chargeId: chId, amount: fee, currency, availableOn });
  }
  const message = declineCode ? declineMessage(declineCode) : null;
  const charge = {
    id: chId,
    object: 'charge',
    amount,
    amount_captured: succeeded ? amount : 0,
    amount_refunded: 0,
    application: fee ? PLATFORM_APPLICATION : null,
    application_fee: feeId,
    application_fee_amount: fee || null,
    balance_transaction: btId,
    billing_details: { address: null, email: customer.data.email, name: customer.data.name, phone: null },
    captured: succeeded,
    created: ctx.now,
    currency,
    customer: customer.id,
    description: input.description,
    disputed: false,
    failure_code: declineCode ? 'card_declined' : null,
    failure_message: message,
    livemode: false,
    metadata: {},
    outcome: succeeded
      ? { network_status: 'approved_by_network', reason: null, risk_level: 'normal', seller_message: 'Payment complete.', type: 'authorized' }
      : { network_status: 'declined_by_network', reason: declineCode, risk_level: 'normal', seller_message: 'The bank did not return any further details with this decline.', type: 'issuer_declined' },
    paid: succeeded,
    payment_intent: piId,
    payment_method: pm,
    payment_method_details: { type: 'card', card: { brand: 'visa', country: 'US', exp_month: 12, exp_year: 2034, funding: 'credit', last4: succeeded ? '4242' : '0002' } },
    receipt_url: null,
    refunded: false,
    status: succeeded ? 'succeeded' : 'failed',
  };
  const paymentIntent = {
    id: piId,
    object: 'payment_intent',
    amount,
    amount_capturable: 0,
    amount_received: succeeded ? amount : 0,
    application_fee_amount: fee || null,
    capture_method: 'automatic',
    created: ctx.now,
    currency,
    customer: customer.id,
    description: input.description,
    last_payment_error: declineCode ? { type: 'card_error', code: 'card_declined', decline_code: declineCode, message, charge: chId } : null,
    latest_charge: chId,
    livemode: false,
    metadata: {},
    payment_method: succeeded ? pm : null,
    payment_method_types: ['card'],
    status: succeeded ? 'succeeded' : 'requires_payment_method',
  };
  await insertObject(ctx, 'payment_intent', paymentIntent);
  await insertObject(ctx, 'charge', charge, { fee, feeRefunded: 0 });
  await emit(ctx, succeeded ? 'charge.succeeded' : 'charge.failed', charge);
  await emit(ctx, succeeded ? 'payment_intent.succeeded' : 'payment_intent.payment_failed', paymentIntent);
  return { succeeded, charge, paymentIntent, declineCode };
}

/** The platform's side of a direct charge: an application fee object and its balance credit. */
async function recordApplicationFee(ctx: Ctx, f: { chargeId: string; amount: number; currency: string; availableOn: number }): Promise<string> {
  const id = newId('fee');
  const bt = await recordBalanceTxn(ctx, {
    amount: f.amount, fee: 0, currency: f.currency, type: 'application_fee', reportingCategory: 'platform_earning',
    source: id, description: null, availableOn: f.availableOn, account: '',
  });
  const data = {
    id,
    object: 'application_fee',
    account: ctx.account,
    amount: f.amount,
    amount_refunded: 0,
    application: PLATFORM_APPLICATION,
    balance_transaction: bt,
    charge: f.chargeId,
    created: ctx.now,
    currency: f.currency,
    fee_source: { charge: f.chargeId, type: 'charge' },
    livemode: false,
    originating_transaction: null,
    refunded: false,
    refunds: { object: 'list', data: [], has_more: false, url: `/v1/application_fees/${id}/refunds` },
  };
  await insertObject(ctx, 'application_fee', data, {}, '');
  await emit(ctx, 'application_fee.created', data, undefined, '');
  return id;
}

/** Sums of net amounts on `account` per currency, split by whether they are available yet. */
export async function balances(ctx: Ctx, account = ctx.account): Promise<Map<string, { available: number; pending: number }>> {
  const rows = await tbl(ctx)
    .selectFrom('objects')
    .select([
      sql<string>`data->>'currency'`.as('currency'),
      sql<number>`coalesce(sum(case when (data->>'available_on')::bigint <= ${ctx.now} then (data->>'net')::bigint else 0 end), 0)::bigint`.as('available'),
      sql<number>`coalesce(sum(case when (data->>'available_on')::bigint > ${ctx.now} then (data->>'net')::bigint else 0 end), 0)::bigint`.as('pending'),
    ])
    .where('type', '=', 'balance_transaction')
    .where('account', '=', account)
    .groupBy(sql`data->>'currency'`)
    .execute();
  return new Map(rows.map((r: any) => [r.currency, { available: Number(r.available), pending: Number(r.pending) }]));
}

export async function retrieveBalance(ctx: Ctx): Promise<unknown> {
  const sums = await balances(ctx);
  if (!sums.size) {
    const acct = ctx.account ? await findObject(ctx, ctx.account, { account: '' }) : undefined;
    sums.set(acct?.data.default_currency ?? 'usd', { available: 0, pending: 0 });
  }
  const entries = [...sums.entries()].sort(([a], [b]) => a.localeCompare(b));
  return {
    object: 'balance',
    available: entries.map(([currency, s]) => ({ amount: s.available, currency, source_types: { card: s.available } })),
    livemode: false,
    pending: entries.map(([currency, s]) => ({ amount: s.pending, currency, source_types: { card: s.pending } })),
  };
}

export function listBalanceTransactions(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  for (const k of ['type', 'source', 'currency'] as const) {
    const v = p.str(k);
    if (v) where.push([[k], v]);
  }
  return listObjects(ctx, 'balance_transaction', p, { url: '/v1/balance_transactions', where });
}

export const retrieveBalanceTransaction = async (ctx: Ctx, id: string) =>
  (await getObject(ctx, id, 'balance_transaction', { noun: 'balance transaction', param: 'id' }));

export function listCharges(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  for (const k of ['customer', 'payment_intent'] as const) {
    const v = p.str(k);
    if (v) where.push([[k], v]);
  }
  return listObjects(ctx, 'charge', p, { url: '/v1/charges', where });
}

export function listPaymentIntents(ctx: Ctx, p: Params) {
  const customer = p.str('customer');
  return listObjects(ctx, 'payment_intent', p, { url: '/v1/payment_intents', ...(customer ? { where: [[['customer'], customer]] } : {}) });
}

export function listApplicationFees(ctx: Ctx, p: Params) {
  const charge = p.str('charge');
  return listObjects(ctx, 'application_fee', p, { url: '/v1/application_fees', account: '', ...(charge ? { where: [[['charge'], charge]] } : {}) });
}
