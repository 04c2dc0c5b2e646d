import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { meetsMinimum, rankTiers, type RankableTier } from './tier-order.js';

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
const tier = (id: string, price_cents: number, billing_period: RankableTier['billing_period'], minute: number, level: number | null = null): RankableTier => ({
  id,
  price_cents,
  billing_period,
  level,
  created_at: at(minute),
});

describe('tier order', () => {
  it('ranks by monthly-normalised price, then by creation time', () => {
    const ranks = rankTiers([
      tier('yearly-cheap', 9000, 'yearly', 1), // 750/month
      tier('monthly', 1000, 'monthly', 2),
      tier('quarterly', 2400, 'quarterly', 3), // 800/month
      tier('monthly-twin', 12000, 'yearly', 0), // 1000/month, older than "monthly"
    ]);
    const order = [...ranks.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id);
    expect(order).toEqual(['yearly-cheap', 'quarterly', 'monthly-twin', 'monthly']);
  });

  it('ranks by level alone once any tier has one, none counting as 0 and equal levels being equal', () => {
    const tiers = [tier('basic', 5000, 'monthly', 0), tier('pro-m', 3000, 'monthly', 1, 2), tier('pro-y', 30000, 'yearly', 2, 2), tier('vip', 100, 'monthly', 3, 5)];
    const ranks = rankTiers(tiers);
    expect(ranks.get('basic')).toBe(0);
    expect(meetsMinimum(ranks, 'pro-y', 'pro-m')).toBe(true);
    expect(meetsMinimum(ranks, 'pro-m', 'pro-y')).toBe(true);
    expect(meetsMinimum(ranks, 'basic', 'pro-m')).toBe(false);
    expect(meetsMinimum(ranks, 'vip', 'pro-m')).toBe(true);
  });

  it('lets anyone meet no minimum and no one meet an unknown one', () => {
    const ranks = rankTiers([tier('a', 1000, 'monthly', 0)]);
    expect(meetsMinimum(ranks, 'a', null)).toBe(true);
    expect(meetsMinimum(ranks, 'a', 'gone')).toBe(false);
  });

  it('gives every tier without levels a distinct rank, whatever the prices', () => {
    const arb = fc.array(
      fc.record({ price: fc.integer({ min: 100, max: 100_000 }), period: fc.constantFrom('monthly' as const, 'quarterly' as const, 'yearly' as const), minute: fc.nat(1000) }),
      { minLength: 1, maxLength: 12 },
    );
    fc.assert(
      fc.property(arb, (specs) => {
        const ranks = rankTiers(specs.map((s, i) => tier(`t${i}`, s.price, s.period, s.minute)));
        expect(new Set(ranks.values()).size).toBe(specs.length);
        // A tier never ranks below one with a strictly lower monthly price.
        specs.forEach((a, i) =>
          specs.forEach((b, j) => {
            const months = { monthly: 1, quarterly: 3, yearly: 12 };
            if (a.price * months[b.period] > b.price * months[a.period]) expect(ranks.get(`t${i}`)!).toBeGreaterThan(ranks.get(`t${j}`)!);
          }),
        );
      }),
    );
  });
});
