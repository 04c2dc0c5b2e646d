import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refundSplit, splitFee } from './fees.js';

/** Independent reference: round-half-up of gross/10 by decimal digits, no division tricks. */
const tenPercentHalfUp = (gross: number): number => {
  const whole = Math.floor(gross / 10);
  return gross % 10 >= 5 ? whole + 1 : whole;
};

describe('platform fee arithmetic', () => {
  it('fee plus net equals gross and the fee is 10% rounded half up, for every amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (gross) => {
        const { feeCents, netCents } = splitFee(gross);
        expect(feeCents + netCents).toBe(gross);
        expect(feeCents).toBe(tenPercentHalfUp(gross));
        expect(netCents).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('rounds exact halves up', () => {
    expect(splitFee(5)).toEqual({ feeCents: 1, netCents: 4 });
    expect(splitFee(4)).toEqual({ feeCents: 0, netCents: 4 });
    expect(splitFee(15)).toEqual({ feeCents: 2, netCents: 13 });
    expect(splitFee(2999)).toEqual({ feeCents: 300, netCents: 2699 });
    expect(splitFee(0)).toEqual({ feeCents: 0, netCents: 0 });
  });

  it('a first refund returns round-half-up(fee × refunded / gross) of the fee and the rest from the net', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (gross, frac) => {
        const amount = Math.max(1, Math.round(gross * frac));
        const { feeCents } = splitFee(gross);
        const split = refundSplit({ grossCents: gross, feeCents, refundedCents: 0, feeRefundedCents: 0, amountCents: amount });
        // Integer reference (fee × amount < 2^53 here): quotient, plus one when the remainder is at least half.
        const q = Math.floor((feeCents * amount) / gross);
        const r = feeCents * amount - q * gross;
        const expected = 2 * r >= gross ? q + 1 : q;
        expect(split.feeRefundCents).toBe(expected);
        expect(split.feeRefundCents + split.netReversalCents).toBe(amount);
      }),
      { numRuns: 1000 },
    );
  });

  it('any sequence of partial refunds up to the gross gives back exactly the fee and the net', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 8 }), (gross, parts) => {
        const { feeCents, netCents } = splitFee(gross);
        let refunded = 0;
        let feeBack = 0;
        let netBack = 0;
        for (const want of [...parts, gross]) {
          const amount = Math.min(want, gross - refunded);
          if (amount === 0) break;
          const s = refundSplit({ grossCents: gross, feeCents, refundedCents: refunded, feeRefundedCents: feeBack, amountCents: amount });
          expect(s.feeRefundCents).toBeGreaterThanOrEqual(0);
          expect(s.netReversalCents).toBeGreaterThanOrEqual(0);
          expect(s.feeRefundCents + s.netReversalCents).toBe(amount);
          refunded += amount;
          feeBack += s.feeRefundCents;
          netBack += s.netReversalCents;
        }
        expect(refunded).toBe(gross);
        expect(feeBack).toBe(feeCents);
        expect(netBack).toBe(netCents);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a refund larger than what remains', () => {
    expect(() => refundSplit({ grossCents: 100, feeCents: 10, refundedCents: 60, feeRefundedCents: 6, amountCents: 41 })).toThrow(RangeError);
  });
});
