import fc from 'fast-check';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, startKit, subscribe, type Creator, type Kit } from './testkit.js';

let kit: Kit;
const creators: Partial<Record<'month' | 'year', Creator>> = {};
beforeAll(async () => {
  kit = await startKit();
  creators.month = await createCreator(kit, { interval: 'month', schedule: 'manual' });
  creators.year = await createCreator(kit, { interval: 'year', schedule: 'manual' });
});
afterAll(async () => kit?.close());

const price = (c: Creator, amount: number, interval: 'month' | 'year') =>
  kit.stripe.prices.create({ product: c.product.id, currency: 'usd', unit_amount: amount, recurring: { interval } }, c.opts);

/** Sum of the account's balance transactions against its balance (available + pending). */
async function ledgerMatchesBalance(c: Creator): Promise<void> {
  const txns = await kit.stripe.balanceTransactions.list({ limit: 100 }, c.opts).autoPagingToArray({ limit: 10_000 });
  const balance = await kit.stripe.balance.retrieve({}, c.opts);
  const total = [...balance.available, ...balance.pending].reduce((s, b) => s + b.amount, 0);
  expect(txns.reduce((s, t) => s + t.net, 0)).toBe(total);
}

describe('always_invoice price changes (property)', () => {
  it('for any prices, period and second of the period, the invoice is the sum of its lines, within a cent of the prorated difference, and the money adds up', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 100, max: 100_000 }),
        fc.integer({ min: 100, max: 100_000 }),
        fc.constantFrom<'month' | 'year'>('month', 'year'),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        async (oldAmount, newAmount, interval, at) => {
          const c = creators[interval]!;
          const [oldPrice, newPrice] = [await price(c, oldAmount, interval), await price(c, newAmount, interval)];
          const { done } = await subscribe(kit, { ...c, price: oldPrice });
          expect(done.status).toBe(200);
          const sub = await kit.stripe.subscriptions.retrieve(done.body.subscription, {}, c.opts);
          const item = sub.items.data[0]!;
          const period = item.current_period_end - item.current_period_start;
          const prorationDate = item.current_period_start + Math.floor(at * period);
          const remaining = item.current_period_end - prorationDate;
          const updated = await kit.stripe.subscriptions.update(
            sub.id,
            { items: [{ id: item.id, price: newPrice.id }], proration_behavior: 'always_invoice', proration_date: prorationDate, expand: ['latest_invoice'] },
            c.opts,
          );
          const invoice = updated.latest_invoice as Stripe.Invoice;
          expect(invoice.billing_reason).toBe('subscription_update');
          expect(invoice.total).toBe(invoice.lines.data.reduce((s, l) => s + l.amount, 0));
          expect(Math.abs(invoice.total - Math.round(((newAmount - oldAmount) * remaining) / period))).toBeLessThanOrEqual(1);
          const charges = await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts);
          if (invoice.total > 0) {
            expect(invoice).toMatchObject({ status: 'paid', amount_paid: invoice.total });
            const charge = charges.data[0]!;
            const bt = await kit.stripe.balanceTransactions.retrieve(charge.balance_transaction as string, {}, c.opts);
            expect(charge.amount).toBe(invoice.total);
            expect(bt.amount).toBe(bt.net + bt.fee);
            // 10 % application fee, rounded half up.
            expect(bt.fee).toBe(Math.floor((charge.amount + 5) / 10));
          } else {
            expect(charges.data).toHaveLength(1);
            const customer = (await kit.stripe.customers.retrieve(sub.customer as string, {}, c.opts)) as Stripe.Customer;
            expect(customer.balance).toBe(invoice.total);
          }
          await ledgerMatchesBalance(c);
        },
      ),
      { numRuns: 16 },
    );
  }, 180_000);
});
