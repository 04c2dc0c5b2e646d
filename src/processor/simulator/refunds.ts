import { invalidRequest, missingParam } from './errors.js';
import { changed, emit } from './events.js';
import { refundSplit } from './fees.js';
import { recordBalanceTxn } from './money.js';
import type { Params } from './params.js';
import { findObject, getObject, insertObject, listObjects, newId, saveObject, type Ctx } from './store.js';

const money = (cents: number, currency: string): string => `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;

/**
 * POST /v1/refunds. The refund reverses the platform fee in proportion (DESIGN §7): the
 * creator's balance is debited only the net part, the platform returns the fee part. While
 * the charge's funds are still pending the reversal shares their availability date, so it
 * comes out of the pending balance; afterwards it comes out of the available balance.
 */
export async function createRefund(ctx: Ctx, p: Params): Promise<unknown> {
  let chargeId = p.str('charge');
  const piId = p.str('payment_intent');
  if (!chargeId && !piId) throw missingParam('charge');
  if (!chargeId && piId) {
    const pi = await getObject(ctx, piId, 'payment_intent', { noun: 'payment_intent', param: 'payment_intent' });
    chargeId = pi.data.latest_charge as string;
  }
  const charge = await getObject(ctx, chargeId!, 'charge', { param: 'charge' });
  const c = charge.data;
  if (piId && c.payment_intent !== piId) throw invalidRequest('The charge does not belong to this PaymentIntent.', 'payment_intent');
  if (c.status !== 'succeeded') {
    throw invalidRequest(`This charge ${c.id} cannot be refunded because it has not succeeded.`, 'charge', 'charge_not_refundable');
  }
  const remaining = c.amount - c.amount_refunded;
  if (remaining <= 0) throw invalidRequest(`Charge ${c.id} has already been refunded.`, 'charge', 'charge_already_refunded');
  const amount = p.int('amount', { min: 1 }) ?? remaining;
  if (amount > remaining) {
    throw invalidRequest(
      `Refund amount (${money(amount, c.currency)}) is greater than unrefunded amount on charge (${money(remaining, c.currency)})`,
      'amount',
      'amount_too_large',
    );
  }
  const { feeRefundCents, netReversalCents } = refundSplit({
    grossCents: c.amount,
    feeCents: charge.internal.fee ?? 0,
    refundedCents: c.amount_refunded,
    feeRefundedCents: charge.internal.feeRefunded ?? 0,
    amountCents: amount,
  });
  const chargeBt = c.balance_transaction ? await findObject(ctx, c.balance_transaction, { type: 'balance_transaction' }) : undefined;
  const availableOn = Math.max(ctx.now, Number(chargeBt?.data.available_on ?? ctx.now));
  const id = newId('re');
  const bt = await recordBalanceTxn(ctx, {
    amount: -amount,
    fee: -feeRefundCents,
    currency: c.currency,
    type: 'refund',
    reportingCategory: 'refund',
    source: id,
    description: 'REFUND FOR CHARGE',
    availableOn,
  });
  const refund = {
    id,
    object: 'refund',
    amount,
    balance_transaction: bt,
    charge: c.id,
    created: ctx.now,
    currency: c.currency,
    destination_details: { card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' }, type: 'card' },
    metadata: p.metadata(),
    payment_intent: c.payment_intent,
    reason: p.enumOf('reason', ['duplicate', 'fraudulent', 'requested_by_customer'] as const) ?? null,
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
  };
  await insertObject(ctx, 'refund', refund, { feeRefundCents, netReversalCents });
  if (feeRefundCents > 0 && c.application_fee) await refundApplicationFee(ctx, c.application_fee, feeRefundCents, availableOn);

  const before = structuredClone(c);
  c.amount_refunded += amount;
  c.refunded = c.amount_refunded === c.amount;
  charge.internal.feeRefunded = (charge.internal.feeRefunded ?? 0) + feeRefundCents;
  await saveObject(ctx, charge);
  await emit(ctx, 'refund.created', refund);
  await emit(ctx, 'charge.refunded', c, changed(before, c));
  return refund;
}

/** The platform gives back its share: a fee refund and a debit of the platform balance. */
async function refundApplicationFee(ctx: Ctx, feeId: string, amount: number, availableOn: number): Promise<void> {
  const fee = await findObject(ctx, feeId, { type: 'application_fee', account: '', forUpdate: true });
  if (!fee) return;
  const id = newId('fr');
  const bt = await recordBalanceTxn(ctx, {
    amount: -amount, fee: 0, currency: fee.data.currency, type: 'application_fee_refund', reportingCategory: 'platform_earning_refund',
    source: id, description: null, availableOn, account: '',
  });
  fee.data.amount_refunded += amount;
  fee.data.refunded = fee.data.amount_refunded === fee.data.amount;
  fee.data.refunds.data.unshift({ id, object: 'fee_refund', amount, balance_transaction: bt, created: ctx.now, currency: fee.data.currency, fee: fee.id, metadata: {} });
  await saveObject(ctx, fee);
}

export async function retrieveRefund(ctx: Ctx, id: string): Promise<unknown> {
  return (await getObject(ctx, id, 'refund', { param: 'id' })).data;
}

export function listRefunds(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  for (const k of ['charge', 'payment_intent'] as const) {
    const v = p.str(k);
    if (v) where.push([[k], v]);
  }
  return listObjects(ctx, 'refund', p, { url: '/v1/refunds', where });
}
