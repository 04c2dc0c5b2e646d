import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribed, type Creator, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

const balanceOf = async (c: Creator) => {
  const b = await kit.stripe.balance.retrieve({}, c.opts);
  return { available: b.available[0]!.amount, pending: b.pending[0]!.amount };
};

async function firstCharge(c: Creator, sub: Stripe.Subscription): Promise<Stripe.Charge> {
  const charges = await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts);
  return charges.data.at(-1)!;
}

describe('refunds', () => {
  it('partial then full refunds reverse the fee proportionally, debit the creator net and refuse over-refunds', async () => {
    const c = await createCreator(kit, { amount: 2999, schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const charge = await firstCharge(c, sub);
    expect(await balanceOf(c)).toEqual({ available: 0, pending: 2699 });

    await expect(kit.stripe.refunds.create({ charge: charge.id, amount: 3000 }, c.opts)).rejects.toMatchObject({ statusCode: 400, code: 'amount_too_large', param: 'amount' });
    const partial = await kit.stripe.refunds.create({ charge: charge.id, amount: 1000 }, c.opts);
    expect(partial).toMatchObject({ object: 'refund', amount: 1000, status: 'succeeded', charge: charge.id });
    const bt = await kit.stripe.balanceTransactions.retrieve(partial.balance_transaction as string, {}, c.opts);
    expect(bt).toMatchObject({ type: 'refund', amount: -1000, fee: -100, net: -900 });
    expect(await balanceOf(c)).toEqual({ available: 0, pending: 1799 });
    expect(await kit.stripe.charges.retrieve(charge.id, {}, c.opts)).toMatchObject({ amount_refunded: 1000, refunded: false });

    const rest = await kit.stripe.refunds.create({ payment_intent: charge.payment_intent as string }, c.opts);
    expect(rest.amount).toBe(1999);
    const restBt = await kit.stripe.balanceTransactions.retrieve(rest.balance_transaction as string, {}, c.opts);
    expect(restBt).toMatchObject({ amount: -1999, fee: -200, net: -1799 });
    expect(await balanceOf(c)).toEqual({ available: 0, pending: 0 });
    expect(await kit.stripe.charges.retrieve(charge.id, {}, c.opts)).toMatchObject({ amount_refunded: 2999, refunded: true });
    await expect(kit.stripe.refunds.create({ charge: charge.id, amount: 1 }, c.opts)).rejects.toMatchObject({ statusCode: 400, code: 'charge_already_refunded' });

    const fee = (await kit.stripe.applicationFees.list({ charge: charge.id })).data[0]!;
    expect(fee).toMatchObject({ amount: 300, amount_refunded: 300, refunded: true, account: c.account });
    expect((await kit.stripe.refunds.list({ charge: charge.id }, c.opts)).data.map((r) => r.amount)).toEqual([1999, 1000]);
    await expect.poll(() => kit.receiver.ofType('charge.refunded', (ch) => ch.id === charge.id).length).toBe(2);
  });

  it('refunding after the funds became available debits the available balance', async () => {
    const c = await createCreator(kit, { amount: 1000, schedule: 'manual' });
    const sub = await subscribed(kit, c);
    await kit.advance(7 * DAY + 60);
    expect(await balanceOf(c)).toEqual({ available: 900, pending: 0 });
    await kit.stripe.refunds.create({ charge: (await firstCharge(c, sub)).id, amount: 500 }, c.opts);
    expect(await balanceOf(c)).toEqual({ available: 450, pending: 0 });
  });
});

describe('balance and payouts', () => {
  it('keeps the net pending for 7 days of simulator clock, then makes it available', async () => {
    const c = await createCreator(kit, { amount: 5000, schedule: 'manual' });
    await subscribed(kit, c);
    await kit.advance(7 * DAY - 120);
    expect(await balanceOf(c)).toEqual({ available: 0, pending: 4500 });
    await kit.advance(180);
    expect(await balanceOf(c)).toEqual({ available: 4500, pending: 0 });
    const txn = (await kit.stripe.balanceTransactions.list({ type: 'charge' }, c.opts)).data[0]!;
    expect(txn.status).toBe('available');
  });

  it('a daily schedule pays out the available balance: pending, in_transit a day later, paid the day after', async () => {
    const c = await createCreator(kit, { amount: 3000, schedule: 'daily' });
    await subscribed(kit, c);
    await kit.advance(8 * DAY);
    const [payout] = (await kit.stripe.payouts.list({}, c.opts)).data;
    expect(payout).toMatchObject({ amount: 2700, status: 'pending', automatic: true, currency: 'usd' });
    expect(payout!.created % DAY).toBe(0);
    expect(payout!.arrival_date).toBe(payout!.created + 2 * DAY);
    expect(await balanceOf(c)).toEqual({ available: 0, pending: 0 });

    await kit.advance(payout!.created + DAY + 60 - (await kit.now()));
    expect((await kit.stripe.payouts.retrieve(payout!.id, {}, c.opts)).status).toBe('in_transit');
    await kit.advance(DAY);
    expect((await kit.stripe.payouts.retrieve(payout!.id, {}, c.opts)).status).toBe('paid');
    const types = kit.receiver.ofType('payout.created', (p) => p.id === payout!.id).length + kit.receiver.ofType('payout.paid', (p) => p.id === payout!.id).length;
    expect(types).toBe(2);
    expect(kit.receiver.ofType('payout.updated', (p) => p.id === payout!.id).map((e) => e.data.object.status)).toEqual(['in_transit', 'paid']);
    expect((await kit.stripe.payouts.list({}, c.opts)).data).toHaveLength(1);
  });

  it('weekly and monthly schedules pay out only on their anchor day', async () => {
    const weekly = await createCreator(kit, { amount: 1000, schedule: 'manual' });
    await kit.stripe.accounts.update(weekly.account, { settings: { payouts: { schedule: { interval: 'weekly', weekly_anchor: 'friday' } } } });
    const monthly = await createCreator(kit, { amount: 1000, schedule: 'manual' });
    const updated = await kit.stripe.accounts.update(monthly.account, { settings: { payouts: { schedule: { interval: 'monthly', monthly_anchor: 15 } } } });
    expect(updated.settings?.payouts?.schedule).toMatchObject({ interval: 'monthly', monthly_anchor: 15 });
    await subscribed(kit, weekly);
    await subscribed(kit, monthly);
    await kit.advance(7 * DAY);
    // Renewals add money every month; over ~7 weeks each schedule pays out at least once.
    await kit.advance(42 * DAY);
    const weeklyPayouts = (await kit.stripe.payouts.list({}, weekly.opts)).data;
    expect(weeklyPayouts.length).toBeGreaterThan(0);
    for (const p of weeklyPayouts) expect(new Date(p.created * 1000).getUTCDay()).toBe(5);
    const monthlyPayouts = (await kit.stripe.payouts.list({}, monthly.opts)).data;
    expect(monthlyPayouts.length).toBeGreaterThan(0);
    for (const p of monthlyPayouts) expect(new Date(p.created * 1000).getUTCDate()).toBe(15);
    expect(monthlyPayouts.every((p) => p.automatic)).toBe(true);
  });

  it('manual payouts work only on a manual schedule and only up to the available balance', async () => {
    const daily = await createCreator(kit, { schedule: 'daily' });
    await expect(kit.stripe.payouts.create({ amount: 100, currency: 'usd' }, daily.opts)).rejects.toMatchObject({ statusCode: 400, code: 'payouts_not_allowed' });

    const c = await createCreator(kit, { amount: 2000, schedule: 'manual' });
    await subscribed(kit, c);
    await expect(kit.stripe.payouts.create({ amount: 100, currency: 'usd' }, c.opts)).rejects.toMatchObject({ statusCode: 400, code: 'balance_insufficient' });
    await kit.advance(7 * DAY + 60);
    await expect(kit.stripe.payouts.create({ amount: 1801, currency: 'usd' }, c.opts)).rejects.toMatchObject({ code: 'balance_insufficient' });
    const payout = await kit.stripe.payouts.create({ amount: 1800, currency: 'usd' }, c.opts);
    expect(payout).toMatchObject({ status: 'pending', automatic: false, amount: 1800 });
    expect(await balanceOf(c)).toEqual({ available: 0, pending: 0 });
    await kit.advance(3 * DAY);
    expect((await kit.stripe.payouts.list({ status: 'paid' }, c.opts)).data.map((p) => p.id)).toEqual([payout.id]);
  });

  it('a failed payout returns its amount to the available balance', async () => {
    const c = await createCreator(kit, { amount: 2000, schedule: 'manual' });
    await subscribed(kit, c);
    await kit.advance(7 * DAY + 60);
    const payout = await kit.stripe.payouts.create({ amount: 1000, currency: 'usd' }, c.opts);
    expect(await balanceOf(c)).toEqual({ available: 800, pending: 0 });
    const failed = await kit.helper(`/v1/test_helpers/payouts/${payout.id}/fail`);
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: 'failed', failure_code: 'could_not_process' });
    expect(kit.receiver.ofType('payout.failed', (p) => p.id === payout.id)).toHaveLength(1);
    expect(await balanceOf(c)).toEqual({ available: 1800, pending: 0 });
    const again = await kit.helper(`/v1/test_helpers/payouts/${payout.id}/fail`);
    expect(again.status).toBe(400);
    await kit.advance(3 * DAY);
    expect((await kit.stripe.payouts.retrieve(payout.id, {}, c.opts)).status).toBe('failed');
  });
});
