import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prorate, refundSplit, splitFee } from './fees.js';

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

describe('prorate', () => {
  it('prorates to the second and rounds half up: 20 of 30 days of 29.99 is 19.99, of 49.99 is 33.33, half of 29.99 is 15.00', () => {
    const day = 86_400;
    expect(prorate(2999, 20 * day, 30 * day)).toBe(1999);
    expect(prorate(4999, 20 * day, 30 * day)).toBe(3333);
    expect(prorate(2999, 15 * day, 30 * day)).toBe(1500);
    expect(prorate(2999, 0, 30 * day)).toBe(0);
    expect(prorate(2999, 30 * day, 30 * day)).toBe(2999);
  });

  it('never strays half a cent from the exact proration and refuses a moment outside the period', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 40_000_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (amount, period, f) => {
        const remaining = Math.floor(f * period);
        const exact = (amount * remaining) / period;
        expect(Math.abs(prorate(amount, remaining, period) - exact)).toBeLessThanOrEqual(0.5 + 1e-9);
      }),
    );
    expect(() => prorate(100, 11, 10)).toThrow(RangeError);
    expect(() => prorate(100, -1, 10)).toThrow(RangeError);
  });
});
