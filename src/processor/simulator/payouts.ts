import { payoutSchedule, reschedulePayouts } from './accounts.js';
import { DAY } from './calendar.js';
import { invalidRequest, StripeError } from './errors.js';
import { changed, emit } from './events.js';
import { balances, recordBalanceTxn } from './money.js';
import type { Params } from './params.js';
import { cancelJobs, findObject, getObject, insertObject, listObjects, newId, saveObject, scheduleJob, type Ctx, type Stored } from './store.js';

/** pending → in_transit after one day, → paid (arrival) after two (DESIGN §6). */
const IN_TRANSIT_AFTER = DAY;
const ARRIVAL_AFTER = 2 * DAY;

async function newPayout(ctx: Ctx, amount: number, currency: string, opts: { automatic: boolean; description: string | null; metadata: Record<string, string> }): Promise<any> {
  const id = newId('po');
  const bt = await recordBalanceTxn(ctx, {
    amount: -amount, fee: 0, currency, type: 'payout', reportingCategory: 'payout', source: id, description: opts.description ?? 'STRIPE PAYOUT', availableOn: ctx.now,
  });
  const data = {
    id,
    object: 'payout',
    amount,
    application_fee: null,
    application_fee_amount: null,
    arrival_date: ctx.now + ARRIVAL_AFTER,
    automatic: opts.automatic,
    balance_transaction: bt,
    created: ctx.now,
    currency,
    description: opts.description,
    destination: `ba_${ctx.account.slice(5, 21) || 'platform'}`,
    failure_balance_transaction: null as string | null,
    failure_code: null as string | null,
    failure_message: null as string | null,
    livemode: false,
    metadata: opts.metadata,
    method: 'standard',
    original_payout: null,
    payout_method: null,
    reconciliation_status: opts.automatic ? 'in_progress' : 'not_applicable',
    reversed_by: null,
    source_type: 'card',
    statement_descriptor: null,
    status: 'pending',
    trace_id: { status: 'pending', value: null },
    type: 'bank_account',
  };
  await insertObject(ctx, 'payout', data);
  await scheduleJob(ctx, 'payout_transit', id, ctx.now + IN_TRANSIT_AFTER);
  await scheduleJob(ctx, 'payout_paid', id, ctx.now + ARRIVAL_AFTER);
  await emit(ctx, 'payout.created', data);
  return data;
}

/**
 * POST /v1/payouts. As on Stripe, an account on an automatic schedule cannot also pay out
 * by hand; the amount must be covered by the available balance in that currency.
 */
export async function createPayout(ctx: Ctx, p: Params): Promise<unknown> {
  const amount = p.reqInt('amount', { min: 1 });
  let currency = p.str('currency')?.toLowerCase();
  if (ctx.account) {
    const account = await getObject(ctx, ctx.account, 'account', { account: '' });
    if (account.data.payouts_enabled === false) {
      throw invalidRequest(
        `Payouts are not enabled for account ${account.id}: it has not completed onboarding or has requirements past due (payouts_enabled is false).`,
        undefined,
        'payouts_not_allowed',
      );
    }
    const interval = payoutSchedule(account).interval;
    if (interval !== 'manual') {
      throw invalidRequest(
        `You cannot create manual payouts while automatic payouts are enabled (settings[payouts][schedule][interval] is ${interval}). Set the interval to manual first.`,
        'amount',
        'payouts_not_allowed',
      );
    }
    currency ??= account.data.default_currency;
  }
  currency ??= 'usd';
  const available = (await balances(ctx)).get(currency)?.available ?? 0;
  if (amount > available) {
    throw new StripeError(400, {
      type: 'invalid_request_error',
      code: 'balance_insufficient',
      param: 'amount',
      message: `You have insufficient funds in your Stripe account for this payout: available ${available} ${currency}, requested ${amount}.`,
    });
  }
  return newPayout(ctx, amount, currency, { automatic: false, description: p.str('description') || null, metadata: p.metadata() });
}

/** Job `auto_payout` (ref = account): pays out each currency's whole available balance. */
export async function runAutoPayout(ctx: Ctx, accountId: string): Promise<void> {
  const account = await findObject(ctx, accountId, { type: 'account', account: '' });
  if (!account || payoutSchedule(account).interval === 'manual') return;
  // While payouts are disabled the balance stays put; the next scheduled day tries again.
  if (account.data.payouts_enabled !== false) {
    for (const [currency, sums] of await balances(ctx, accountId)) {
      if (sums.available > 0) await newPayout(ctx, sums.available, currency, { automatic: true, description: 'STRIPE PAYOUT', metadata: {} });
    }
  }
  await reschedulePayouts(ctx, account);
}

async function transition(ctx: Ctx, payout: Stored, status: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = structuredClone(payout.data);
  Object.assign(payout.data, { status }, extra);
  if (status === 'paid') payout.data.trace_id = { status: 'supported', value: `SIM${payout.id.slice(3, 15).toUpperCase()}` };
  await saveObject(ctx, payout);
  await emit(ctx, 'payout.updated', payout.data, changed(before, payout.data));
  if (status === 'paid' || status === 'failed' || status === 'canceled') await emit(ctx, `payout.${status}`, payout.data);
}

/** Jobs `payout_transit` and `payout_paid`. */
export async function advancePayout(ctx: Ctx, payoutId: string, to: 'in_transit' | 'paid'): Promise<void> {
  const payout = await findObject(ctx, payoutId, { type: 'payout', forUpdate: true });
  if (!payout) return;
  const s = payout.data.status;
  if ((to === 'in_transit' && s === 'pending') || (to === 'paid' && (s === 'pending' || s === 'in_transit'))) {
    await transition(ctx, payout, to, to === 'paid' ? { reconciliation_status: payout.data.automatic ? 'completed' : 'not_applicable' } : {});
  }
}

/** POST /v1/test_helpers/payouts/{id}/fail: the bank returns the payout; its amount is available again. */
export async function failPayout(ctx: Ctx, payout: Stored, code = 'could_not_process', message = 'The bank could not process this payout.'): Promise<unknown> {
  if (payout.data.status === 'failed' || payout.data.status === 'canceled') {
    throw invalidRequest(`Payout ${payout.id} is already ${payout.data.status}.`, 'payout');
  }
  const bt = await recordBalanceTxn(ctx, {
    amount: payout.data.amount, fee: 0, currency: payout.data.currency, type: 'payout_failure', reportingCategory: 'payout_reversal',
    source: payout.id, description: 'Payout failure', availableOn: ctx.now,
  });
  await cancelJobs(ctx, payout.id);
  await transition(ctx, payout, 'failed', { failure_balance_transaction: bt, failure_code: code, failure_message: message });
  return payout.data;
}

export async function cancelPayout(ctx: Ctx, id: string): Promise<unknown> {
  const payout = await getObject(ctx, id, 'payout', { param: 'id' });
  if (payout.data.status !== 'pending') throw invalidRequest(`Payouts can only be canceled while pending; ${id} is ${payout.data.status}.`, 'payout');
  await recordBalanceTxn(ctx, {
    amount: payout.data.amount, fee: 0, currency: payout.data.currency, type: 'payout_cancel', reportingCategory: 'payout_reversal',
    source: payout.id, description: 'Payout cancellation', availableOn: ctx.now,
  });
  await cancelJobs(ctx, payout.id);
  await transition(ctx, payout, 'canceled');
  return payout.data;
}

export async function retrievePayout(ctx: Ctx, id: string): Promise<unknown> {
  return (await getObject(ctx, id, 'payout', { param: 'id' })).data;
}

export function listPayouts(ctx: Ctx, p: Params) {
  const status = p.str('status');
  return listObjects(ctx, 'payout', p, { url: '/v1/payouts', ...(status ? { where: [[['status'], status]] } : {}) });
}
