import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, eventually, simHelper, subscribe, type Subscribed } from '../../../test/billing-kit.js';
import { buildTestApp, createCreator, json, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

const balanceOf = async (s: Subscribed) => json(await t.app.inject({ method: 'GET', url: '/api/v1/payouts/balance', headers: s.creator.headers })).data;
const manual = (s: Subscribed, amount_cents: number) =>
  t.app.inject({ method: 'POST', url: '/api/v1/payouts/manual', headers: s.creator.headers, payload: { amount_cents } });
/** Changes the schedule at the processor, as the creator would in its dashboard, and waits for the webhook. */
const setSchedule = async (s: Subscribed, interval: 'daily' | 'weekly' | 'monthly' | 'manual', weekly_anchor?: 'friday') => {
  await t.stripe.accounts.update(s.account, { settings: { payouts: { schedule: { interval, ...(weekly_anchor ? { weekly_anchor } : {}) } } } });
  await eventually(t, async () => {
    const row = await t.database.db.selectFrom('creators').select('payout_schedule').where('id', '=', s.creator.id).executeTakeFirstOrThrow();
    expect(row.payout_schedule).toBe(interval);
  });
};
/** A creator whose member paid `priceCents` and whose funds are available (7 days later). */
async function funded(priceCents: number, schedule: 'manual' | 'daily' = 'manual') {
  const s = await subscribe(t, { priceCents, billingPeriod: 'yearly' });
  await setSchedule(s, schedule);
  await advanceDays(t, 8);
  return s;
}

describe('balance', () => {
  it('reads available and pending from the processor and sums creator net', async () => {
    const s = await subscribe(t, { priceCents: 5000, billingPeriod: 'yearly' });
    const balance = await balanceOf(s);
    const chargedThisMonth = new Date(s.subscription.current_period_start).getUTCMonth() === new Date().getUTCMonth();
    expect(balance).toMatchObject({
      currency: 'brl',
      available_cents: 0,
      pending_cents: 4500,
      all_time_cents: 4500,
      this_month_received_cents: chargedThisMonth ? 4500 : 0,
      payout_schedule: 'daily',
    });
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(balance.next_auto_payout_at).toBe(tomorrow.toISOString());
  });

  it('learns a schedule switch from the account.updated webhook', async () => {
    const s = await subscribe(t);
    await setSchedule(s, 'manual');
    expect(await balanceOf(s)).toMatchObject({ payout_schedule: 'manual', next_auto_payout_at: null });
    await setSchedule(s, 'weekly', 'friday');
    const weekly = await balanceOf(s);
    expect(weekly.payout_schedule).toBe('weekly');
    expect(new Date(weekly.next_auto_payout_at).getUTCDay()).toBe(5);
  });
});

describe('the local copy of balance transactions', () => {
  const copied = (creatorId: string) =>
    t.database.db.selectFrom('balance_transactions').select(['id', 'type', 'net_cents']).where('creator_id', '=', creatorId).orderBy('created_at').orderBy('id').execute();
  const refund = (s: Subscribed, amount_cents: number) =>
    t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/refund`, headers: s.creator.headers, payload: { amount_cents } });

  it('copies the history once, then only what is newer, and never counts a transaction twice under concurrent reads', async () => {
    const s = await funded(10_000);
    expect((await balanceOf(s)).all_time_cents).toBe(9000);
    expect((await copied(s.creator.id)).map((r) => [r.type, Number(r.net_cents)])).toEqual([['charge', 9000]]);

    // 1,000 of 10,000 refunded: 100 of fee back, 900 of net reversed; found by the next read.
    expect((await refund(s, 1000)).statusCode).toBe(201);
    expect((await balanceOf(s)).all_time_cents).toBe(8100);
    expect((await refund(s, 2000)).statusCode).toBe(201);
    const reads = await Promise.all(Array.from({ length: 5 }, () => balanceOf(s)));
    expect(reads.map((b) => b.all_time_cents)).toEqual(Array(5).fill(6300));
    expect((await copied(s.creator.id)).map((r) => r.type)).toEqual(['charge', 'refund', 'refund']);
    const months = await t.database.db.selectFrom('creator_monthly_net').select('net_cents').where('creator_id', '=', s.creator.id).execute();
    expect(months.reduce((sum, m) => sum + Number(m.net_cents), 0)).toBe(6300);
  });

  it('is held against the processor by the ledger check, which names a drifted copy', async () => {
    const s = await funded(5000);
    const ledgerOf = async () =>
      json(await t.app.inject({ method: 'GET', url: `/api/v1/admin/creators/${s.creator.id}/ledger`, headers: { authorization: `Bearer ${t.adminToken}` } })).data;
    expect((await ledgerOf()).ok).toBe(true);
    await t.database.db.updateTable('creator_monthly_net').set({ net_cents: 1 }).where('creator_id', '=', s.creator.id).execute();
    const drifted = await ledgerOf();
    expect(drifted.ok).toBe(false);
    expect(drifted.checks.find((c: { name: string }) => c.name.startsWith('local copy'))).toMatchObject({ ok: false, detail: expect.stringContaining('4500 at the processor') });
  });
});

describe('manual payouts', () => {
  it('are refused with 422 manual_payouts_disabled while the schedule is automatic', async () => {
    const s = await subscribe(t);
    const res = await manual(s, 1000);
    expect(res.statusCode).toBe(422);
    expect(json(res).error.code).toBe('manual_payouts_disabled');
    expect(json(res).error.message).toMatch(/dashboard/);
  });

  it('enforce the minimum and the available balance, then pay out and debit available', async () => {
    const s = await funded(10_000);
    expect((await balanceOf(s)).available_cents).toBe(9000);
    const low = await manual(s, 99);
    expect(low.statusCode).toBe(422);
    expect(json(low).error.code).toBe('amount_below_minimum');
    const high = await manual(s, 9001);
    expect(high.statusCode).toBe(422);
    expect(json(high).error).toMatchObject({ code: 'insufficient_balance', details: [{ field: 'amount_cents', message: expect.stringContaining('9000') }] });
    const ok = await manual(s, 4000);
    expect(ok.statusCode).toBe(201);
    expect(json(ok).data).toMatchObject({ amount_cents: 4000, currency: 'brl', status: 'pending', method: 'manual', processor_payout_id: expect.stringMatching(/^po_/) });
    expect((await balanceOf(s)).available_cents).toBe(5000);
  });

  it('never overdraw the balance under concurrent requests', async () => {
    const s = await funded(10_000);
    const results = await Promise.all([manual(s, 6000), manual(s, 6000), manual(s, 6000)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 422, 422]);
    expect((await balanceOf(s)).available_cents).toBe(3000);
  });

  it('replay with the same Idempotency-Key instead of paying out twice', async () => {
    const s = await funded(10_000);
    const send = () =>
      t.app.inject({ method: 'POST', url: '/api/v1/payouts/manual', headers: { ...s.creator.headers, 'idempotency-key': 'payout-1' }, payload: { amount_cents: 2000 } });
    const first = await send();
    const again = await send();
    expect(again.body).toBe(first.body);
    expect((await balanceOf(s)).available_cents).toBe(7000);
  });
});

describe('payout lifecycle', () => {
  it('shows a failed payout with its reason and returns its amount to available', async () => {
    const s = await funded(10_000);
    const payout = json(await manual(s, 9000)).data;
    const failed = await simHelper(t, `payouts/${payout.processor_payout_id}/fail`);
    expect(failed.status).toBe(200);
    await t.app.tasks.idle();
    const got = json(await t.app.inject({ method: 'GET', url: `/api/v1/payouts/${payout.id}`, headers: s.creator.headers })).data;
    expect(got.status).toBe('failed');
    expect(got.failure_reason).toBeTruthy();
    expect((await balanceOf(s)).available_cents).toBe(9000);
  });

  it('mirrors automatic payouts from pending to in transit to paid, filterable by status', async () => {
    const s = await funded(10_000, 'daily');
    await advanceDays(t, 3);
    const list = json(await t.app.inject({ method: 'GET', url: '/api/v1/payouts?status=paid', headers: s.creator.headers }));
    expect(list.data.length).toBeGreaterThanOrEqual(1);
    expect(list.data[0]).toMatchObject({ method: 'automatic', status: 'paid', amount_cents: 9000 });
    const bad = await t.app.inject({ method: 'GET', url: '/api/v1/payouts?status=lost', headers: s.creator.headers });
    expect(bad.statusCode).toBe(400);
  });

  it("answers 404 for another creator's payout", async () => {
    const s = await funded(10_000);
    const payout = json(await manual(s, 1000)).data;
    const stranger = await createCreator(t);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/payouts/${payout.id}`, headers: stranger.headers })).statusCode).toBe(404);
    expect(json(await t.app.inject({ method: 'GET', url: '/api/v1/payouts', headers: stranger.headers })).data).toEqual([]);
  });
});

describe('ledger', () => {
  it('adds up after charges, a partial refund and payouts', async () => {
    const s = await funded(9999);
    await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/refund`, headers: s.creator.headers, payload: { amount_cents: 3333 } });
    await manual(s, 2000);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/creators/${s.creator.id}/ledger`, headers: { authorization: `Bearer ${t.adminToken}` } });
    const ledger = json(res).data;
    expect(ledger.ok, JSON.stringify(ledger.checks)).toBe(true);
    expect(ledger.charges).toMatchObject({ count: 1, gross_cents: 9999, fee_cents: 1000, net_cents: 8999 });
    // 3333 of 9999 refunded: a third of the fee (333.3 → 333) comes back.
    expect(ledger.refunds).toMatchObject({ count: 1, amount_cents: 3333, fee_reversed_cents: 333, net_reversed_cents: 3000 });
    expect(ledger.all_time_net_cents).toBe(8999 - 3000);
    const balance = await balanceOf(s);
    expect(balance.all_time_cents).toBe(ledger.all_time_net_cents);
  });
});
