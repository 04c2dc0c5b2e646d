/**
 * The one place where platform-fee arithmetic lives (DESIGN §7): fee = round-half-up of
 * the fee percentage of each charge, net = gross − fee, refunds reverse the fee in
 * proportion. Everything is integer cents computed with BigInt, so no float rounding can
 * make fee + net differ from gross.
 */

/** round-half-up(numerator / denominator) for non-negative integers. */
function divRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

/** Stripe takes application_fee_percent with up to two decimals; basis points keep it exact. */
function toBasisPoints(percent: number): bigint {
  if (!Number.isFinite(percent) || percent < 0 || percent > 100) throw new RangeError(`fee percent out of range: ${percent}`);
  return BigInt(Math.round(percent * 100));
}

function assertCents(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer of cents, got ${value}`);
}

export interface FeeSplit {
  feeCents: number;
  netCents: number;
}

/** Platform fee and creator net of one charge. Default 10 % is the Tribes platform fee. */
export function splitFee(grossCents: number, feePercent = 10): FeeSplit {
  assertCents('grossCents', grossCents);
  const fee = divRoundHalfUp(BigInt(grossCents) * toBasisPoints(feePercent), 10_000n);
  return { feeCents: Number(fee), netCents: grossCents - Number(fee) };
}

export interface RefundSplitInput {
  grossCents: number;
  feeCents: number;
  /** Refunded before this refund (sum of earlier refunds of the same charge). */
  refundedCents: number;
  /** Fee already returned by those earlier refunds. */
  feeRefundedCents: number;
  /** This refund. */
  amountCents: number;
}

export interface RefundSplit {
  /** Part of this refund taken back from the platform fee. */
  feeRefundCents: number;
  /** Part of this refund debited from the creator's balance. */
  netReversalCents: number;
}

/**
 * How one refund divides between the platform fee and the creator's net.
 *
 * The fee returned is round-half-up(fee × refunded / gross) computed on the cumulative
 * refunded amount, and this refund takes the difference from what earlier refunds already
 * returned. For a first refund that is exactly round-half-up(fee × amount / gross); over any
 * sequence of partial refunds adding up to the gross, the fee returned adds up to the
 * whole fee and the net reversed to the whole net, so nothing is lost to rounding.
 */
export function refundSplit(input: RefundSplitInput): RefundSplit {
  const { grossCents, feeCents, refundedCents, feeRefundedCents, amountCents } = input;
  for (const [k, v] of Object.entries(input)) assertCents(k, v);
  if (feeCents > grossCents) throw new RangeError('fee exceeds gross');
  if (refundedCents + amountCents > grossCents) throw new RangeError('refund exceeds the unrefunded amount');
  if (grossCents === 0) return { feeRefundCents: 0, netReversalCents: 0 };
  const cumulative = divRoundHalfUp(BigInt(feeCents) * BigInt(refundedCents + amountCents), BigInt(grossCents));
  // Earlier refunds were computed by this same rule, so cumulative >= feeRefundedCents;
  // the clamps only guard against callers passing inconsistent history.
  const feeRefund = Math.min(amountCents, Math.max(0, Number(cumulative) - feeRefundedCents));
  return { feeRefundCents: feeRefund, netReversalCents: amountCents - feeRefund };
}

/**
 * Proration of one price over part of a billing period, to the second: round-half-up of
 * amount × remaining / period. Each proration line is rounded on its own, as Stripe does,
 * so a change's total may differ by a cent from prorating the price difference.
 */
export function prorate(amountCents: number, remainingSeconds: number, periodSeconds: number): number {
  assertCents('amountCents', amountCents);
  if (!Number.isSafeInteger(remainingSeconds) || !Number.isSafeInteger(periodSeconds) || periodSeconds <= 0 || remainingSeconds < 0 || remainingSeconds > periodSeconds) {
    throw new RangeError(`remaining ${remainingSeconds} s must lie within the period of ${periodSeconds} s`);
  }
  return Number(divRoundHalfUp(BigInt(amountCents) * BigInt(remainingSeconds), BigInt(periodSeconds)));
}
