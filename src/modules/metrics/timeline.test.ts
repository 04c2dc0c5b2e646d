import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, eventually, openCheckout, pay, simHelper } from '../../../test/billing-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';

/**
 * The creator metrics on a timeline the processor simulator drives: members pay through hosted
 * checkout, renewals are charged, a failing card runs out of retries, a cancel at period end
 * takes effect, all by moving the simulator's clock; the service learns each change from the
 * simulator's webhooks, so the counters are moved by the mirror itself. The service's clock
 * follows the simulator's.
 */
let t: TestApp;
let simNow = new Date();
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true, now: () => simNow });
});
afterAll(async () => t.close());

async function readClock() {
  const res = await fetch(`${t.simulator.url}/v1/test_helpers/clock`, { headers: { authorization: 'Bearer sk_test_tribes' } });
  simNow = new Date(((await res.json()) as { now: number }).now * 1000);
}

/** Moves the simulator's clock to `day` of the month `months` after the start's, at noon UTC. */
async function advanceTo(start: Date, months: number, day: number) {
  const target = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + months, day, 12));
  await advanceDays(t, (target.getTime() - simNow.getTime()) / 86_400_000);
  await readClock();
}

async function join(member: TestMember, tierId: string) {
  const opened = await openCheckout(t, member, tierId);
  expect(opened.statusCode, opened.body).toBe(201);
  expect((await pay(t, json(opened).data.processor_session_id)).status).toBe(200);
}

const get = async (creator: TestCreator, url: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
};

describe('creator metrics on a timeline driven by the processor simulator', () => {
  it('follows checkouts, renewals, a card that keeps failing and a cancel at period end into cohorts, churn and money', async () => {
    // Start on the 20th of next month at noon (UTC), so every step below lands in a known month.
    await readClock();
    const start = new Date(Date.UTC(simNow.getUTCFullYear(), simNow.getUTCMonth() + 1, 1));
    await advanceTo(start, 0, 20);
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const tier = (await createTier(t, creator, community.id, { price_cents: 1000, billing_period: 'monthly' })).id;
    // Month 0, the 20th: A, B and C join.
    const [a, b, c, d] = [await createMember(t), await createMember(t), await createMember(t), await createMember(t)];
    for (const m of [a, b, c]) await join(m, tier);
    const subsNow = () => t.database.db.selectFrom('subscriptions').select(['id', 'member_id', 'processor_customer_id']).where('creator_id', '=', creator.id).execute();
    await eventually(t, async () => expect(await subsNow()).toHaveLength(3));
    const subs = await subsNow();
    const subOf = (m: TestMember) => subs.find((s) => s.member_id === m.id)!;
    // B's card fails from now on; C cancels at the end of the first period (month 1, the 20th).
    expect((await simHelper(t, `customers/${subOf(b).processor_customer_id}/payment_behavior`, { fail: true })).status).toBe(200);
    const cancel = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subOf(c).id}/cancel`, headers: creator.headers, payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(200);
    // Month 1, the 5th: D joins. Then to month 2, the 10th: A renews on the 20th, B goes past due and
    // is canceled after the last retry (the 27th), C's subscription ends on the 20th, D renews on the 5th.
    await advanceTo(start, 1, 5);
    await join(d, tier);
    await advanceTo(start, 2, 10);

    const cohorts = await get(creator, '/creator-metrics/cohorts?period=month&periods=3');
    expect(cohorts.cohorts.map((x: { size: number; retention_pct: number[] }) => [x.size, x.retention_pct])).toEqual([
      // A, B, C: all three at the end of month 0; only A at the end of month 1 and now.
      [3, [100, 33.3, 33.3]],
      // D: still there now.
      [1, [100, 100]],
      [0, []],
    ]);
    const summary = await get(creator, '/creator-metrics');
    expect(summary).toMatchObject({
      active_subscribers: 2,
      trialing: 0,
      mrr_cents: 2000,
      // D's renewal on the 5th; A renews on the 20th.
      this_month_revenue_cents: 1000,
      // Live 30 days ago: A, B, C, D (D joined on month 1's 5th, before the window); B and C left since.
      churn_rate_30d: 0.5,
      growth_30d: { new_subscribers: 0, lost_subscribers: 2, net_growth: -2 },
      tier_mix: [{ tier_id: tier, members: 2, mrr_cents: 2000 }],
    });
    // The counters the webhooks moved are what a recomputation from the mirror gives.
    const report = json(await t.app.inject({ method: 'POST', url: `/api/v1/admin/reconcile?creator_id=${creator.id}`, headers: { authorization: `Bearer ${t.adminToken}` } })).data;
    expect(report).toMatchObject({ subscriptions_fixed: 0, metrics_rows_fixed: 0 });
  }, 60_000);
});
