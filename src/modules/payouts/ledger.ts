import type { Processor } from '../../processor/processor.js';

/**
 * The creator's money as the processor records it, and the identities that must hold
 * (DESIGN §7): every charge splits into creator net + platform fee (fee = round-half-up 10 %),
 * refunds reverse net and fee in proportion, and what the account holds plus what it paid out
 * equals everything it ever earned net.
 */
export interface LedgerCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Ledger {
  currency: string;
  charges: { count: number; gross_cents: number; fee_cents: number; net_cents: number };
  refunds: { count: number; amount_cents: number; fee_reversed_cents: number; net_reversed_cents: number };
  payouts: { paid_cents: number; in_transit_cents: number };
  balance: { available_cents: number; pending_cents: number };
  all_time_net_cents: number;
  this_month_net_cents: number;
  checks: LedgerCheck[];
  ok: boolean;
}

/** The amount in `currency` of a processor balance list (`balance.available` or `balance.pending`); 0 when absent. */
export const amountIn = (list: ReadonlyArray<{ amount: number; currency: string }>, currency: string): number =>
  list.find((b) => b.currency === currency)?.amount ?? 0;

/** round-half-up(a / b) for non-negative integers, exactly. */
const divRoundHalfUp = (a: number, b: number) => Math.floor((2 * a + b) / (2 * b));

export async function readLedger(processor: Processor, account: string, currency: string, now = new Date()): Promise<Ledger> {
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000;
  const charges = new Map<string, { gross: number; fee: number; net: number }>();
  const refundTxns = new Map<string, { amount: number; fee: number; net: number }>();
  const ledger: Ledger = {
    currency,
    charges: { count: 0, gross_cents: 0, fee_cents: 0, net_cents: 0 },
    refunds: { count: 0, amount_cents: 0, fee_reversed_cents: 0, net_reversed_cents: 0 },
    payouts: { paid_cents: 0, in_transit_cents: 0 },
    balance: { available_cents: 0, pending_cents: 0 },
    all_time_net_cents: 0,
    this_month_net_cents: 0,
    checks: [],
    ok: true,
  };
  const check = (name: string, ok: boolean, detail: string) => ledger.checks.push({ name, ok, detail });

  for await (const txn of processor.balanceTransactions(account)) {
    if (txn.currency !== currency || (txn.type !== 'charge' && txn.type !== 'refund')) continue;
    ledger.all_time_net_cents += txn.net;
    if (txn.created >= monthStart) ledger.this_month_net_cents += txn.net;
    const source = typeof txn.source === 'string' ? txn.source : (txn.source?.id ?? txn.id);
    if (txn.type === 'charge') {
      charges.set(source, { gross: txn.amount, fee: txn.fee, net: txn.net });
      ledger.charges.count++;
      ledger.charges.gross_cents += txn.amount;
      ledger.charges.fee_cents += txn.fee;
      ledger.charges.net_cents += txn.net;
      if (txn.amount !== txn.net + txn.fee || txn.fee !== divRoundHalfUp(txn.amount, 10)) {
        check(`charge ${source}`, false, `gross ${txn.amount} ≠ net ${txn.net} + fee ${txn.fee}, or fee is not 10 % rounded half up`);
      }
    } else {
      refundTxns.set(source, { amount: -txn.amount, fee: -txn.fee, net: -txn.net });
    }
  }

  // Refunds reverse the fee in proportion to what was refunded of each charge (cumulatively).
  const refundedByCharge = new Map<string, { amount: number; fee: number }>();
  for await (const refund of processor.refunds(account)) {
    const txn = refundTxns.get(refund.id);
    const chargeId = typeof refund.charge === 'string' ? refund.charge : refund.charge?.id;
    if (!txn || !chargeId || refund.currency !== currency) continue;
    ledger.refunds.count++;
    ledger.refunds.amount_cents += txn.amount;
    ledger.refunds.fee_reversed_cents += txn.fee;
    ledger.refunds.net_reversed_cents += txn.net;
    const sum = refundedByCharge.get(chargeId) ?? { amount: 0, fee: 0 };
    refundedByCharge.set(chargeId, { amount: sum.amount + txn.amount, fee: sum.fee + txn.fee });
  }
  for (const [chargeId, refunded] of refundedByCharge) {
    const charge = charges.get(chargeId);
    const expectedFee = charge ? divRoundHalfUp(charge.fee * refunded.amount, charge.gross) : NaN;
    if (refunded.fee !== expectedFee) check(`refunds of ${chargeId}`, false, `fee reversed ${refunded.fee}, expected ${expectedFee} for ${refunded.amount} refunded`);
  }

  for await (const payout of processor.payouts(account)) {
    if (payout.currency !== currency) continue;
    if (payout.status === 'paid') ledger.payouts.paid_cents += payout.amount;
    else if (payout.status === 'pending' || payout.status === 'in_transit') ledger.payouts.in_transit_cents += payout.amount;
  }
  const balance = await processor.retrieveBalance(account);
  ledger.balance.available_cents = amountIn(balance.available, currency);
  ledger.balance.pending_cents = amountIn(balance.pending, currency);

  const { charges: c, refunds: r, payouts: p, balance: b } = ledger;
  check('charges: gross = net + fee', c.gross_cents === c.net_cents + c.fee_cents, `${c.gross_cents} = ${c.net_cents} + ${c.fee_cents}`);
  check('refunds: amount = net reversed + fee reversed', r.amount_cents === r.net_reversed_cents + r.fee_reversed_cents, `${r.amount_cents} = ${r.net_reversed_cents} + ${r.fee_reversed_cents}`);
  const held = b.available_cents + b.pending_cents + p.paid_cents + p.in_transit_cents;
  check(
    'available + pending + paid out + in transit = all-time net',
    held === ledger.all_time_net_cents,
    `${b.available_cents} + ${b.pending_cents} + ${p.paid_cents} + ${p.in_transit_cents} = ${held}; all-time net ${ledger.all_time_net_cents}`,
  );
  ledger.ok = ledger.checks.every((x) => x.ok);
  return ledger;
}
