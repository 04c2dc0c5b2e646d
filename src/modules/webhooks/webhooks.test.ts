import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, eventually, subscribe } from '../../../test/billing-kit.js';
import { buildTestApp, json, TEST_WEBHOOK_SECRET, type TestApp } from '../../../test/helpers.js';
import { verifyEvent } from './webhooks.routes.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

const deliver = (payload: string, signature: string) =>
  t.app.inject({ method: 'POST', url: '/api/v1/webhooks/processor', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, payload });

const sign = (payload: string, timestamp = Math.floor(Date.now() / 1000), secret = TEST_WEBHOOK_SECRET) =>
  t.stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });

const fakeEvent = (id: string) => JSON.stringify({ id, object: 'event', type: 'customer.created', account: 'acct_x', data: { object: { id: 'cus_x' } } });

const mirrorOf = async (processorId: string) =>
  t.database.db
    .selectFrom('subscriptions')
    .select(['status', 'cancel_at_period_end', 'current_period_start', 'current_period_end', 'canceled_at', 'price_cents', 'tier_id'])
    .where('processor_subscription_id', '=', processorId)
    .executeTakeFirst();

/** Drops a subscription from the mirror, with the payment, history and member-directory rows that point at it. */
async function forgetSubscription(processorId: string) {
  const ids = t.database.db.selectFrom('subscriptions').select('id').where('processor_subscription_id', '=', processorId);
  await t.database.db.deleteFrom('payments').where('subscription_id', 'in', ids).execute();
  await t.database.db.deleteFrom('subscription_changes').where('subscription_id', 'in', ids).execute();
  await t.database.db.deleteFrom('community_members').where('subscription_id', 'in', ids).execute();
  await t.database.db.deleteFrom('subscriptions').where('processor_subscription_id', '=', processorId).execute();
}

describe('webhook signatures', () => {
  it('accepts a correctly signed event once and acknowledges its redelivery without change', async () => {
    const payload = fakeEvent(`evt_sig_${Date.now()}`);
    const first = await deliver(payload, sign(payload));
    expect(first.statusCode).toBe(200);
    expect(json(first).data).toEqual({ received: true, duplicate: false });
    const again = await deliver(payload, sign(payload));
    expect(json(again).data).toEqual({ received: true, duplicate: true });
  });

  it('refuses forged, stale and future-dated signatures and records nothing', async () => {
    const id = `evt_bad_${Date.now()}`;
    const payload = fakeEvent(id);
    const now = Math.floor(Date.now() / 1000);
    for (const signature of [
      sign(payload, now, 'whsec_someone_else'),
      // ±330 s, not ±301: the server reads its own clock a moment later, and a second
      // boundary crossed in between must not turn a refusal into an acceptance.
      sign(payload, now - 330),
      sign(payload, now + 330),
      sign(payload.replace('cus_x', 'cus_y')).replace(/v1=[0-9a-f]+/, 'v1=' + '0'.repeat(64)),
      'garbage',
    ]) {
      const res = await deliver(payload, signature);
      expect(res.statusCode).toBe(400);
      expect(json(res).error.code).toBe('invalid_signature');
    }
    expect(await deliver(payload, '')).toMatchObject({ statusCode: 400 });
    const stored = await t.database.db.selectFrom('webhook_events').select('id').where('id', '=', id).execute();
    expect(stored).toEqual([]);
  });

  it('draws the ±5-minute line exactly at 300 seconds, in both directions', () => {
    const payload = fakeEvent('evt_edge');
    const at = 4_000_000_000; // far ahead: the SDK itself only refuses timestamps older than its own clock allows
    const check = (timestamp: number) => () => verifyEvent(t.stripe, payload, sign(payload, timestamp), [TEST_WEBHOOK_SECRET], at);
    expect(check(at - 300)).not.toThrow();
    expect(check(at + 300)).not.toThrow();
    expect(check(at - 301)).toThrow(/more than 5 minutes/);
    expect(check(at + 301)).toThrow(/more than 5 minutes/);
  });

  it('accepts any v1 of a rolled secret', async () => {
    const payload = fakeEvent(`evt_roll_${Date.now()}`);
    const now = Math.floor(Date.now() / 1000);
    const old = sign(payload, now, 'whsec_retired');
    const current = sign(payload, now);
    const both = `${old},v1=${/v1=([0-9a-f]+)/.exec(current)![1]}`;
    expect((await deliver(payload, both)).statusCode).toBe(200);
  });
});

describe('out-of-order and duplicate delivery', () => {
  it('ends in the processor state whatever the order and number of deliveries', async () => {
    // A real lifecycle: checkout, a renewal, then cancel at period end.
    const s = await subscribe(t);
    await advanceDays(t, 31);
    await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/cancel`, headers: s.creator.headers, payload: {} });
    await t.app.tasks.idle();
    const processorId = s.subscription.processor_subscription_id as string;
    const expected = await mirrorOf(processorId);
    expect(expected).toMatchObject({ status: 'active', cancel_at_period_end: true });

    const events = (await t.stripe.events.list({ limit: 100 }, { stripeAccount: s.account })).data.filter((e) =>
      JSON.stringify(e.data.object).includes(processorId),
    );
    expect(events.length).toBeGreaterThanOrEqual(4);

    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: events.length, maxLength: events.length }),
        async (order, times) => {
          // Forget the mirror and the inbox, then replay the real events in this order.
          await t.database.db.deleteFrom('webhook_events').where('id', 'in', events.map((e) => e.id)).execute();
          await forgetSubscription(processorId);
          const deliveries = order.flatMap((e, i) => Array.from({ length: times[i]! }, () => JSON.stringify(e)));
          for (const payload of deliveries) expect((await deliver(payload, sign(payload))).statusCode).toBe(200);
          await t.app.tasks.idle();
          expect(await mirrorOf(processorId)).toEqual(expected);
        },
      ),
      { numRuns: 8 },
    );
  });
});

describe('pausing a community', () => {
  it('sets live subscriptions to cancel at period end at the processor, and resuming lifts it', async () => {
    const s = await subscribe(t);
    await t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${s.communityId}`, headers: s.creator.headers });
    await t.app.tasks.idle();
    const processorId = s.subscription.processor_subscription_id as string;
    const atProcessor = await t.stripe.subscriptions.retrieve(processorId, {}, { stripeAccount: s.account });
    expect(atProcessor.cancel_at_period_end).toBe(true);
    expect(await mirrorOf(processorId)).toMatchObject({ status: 'active', cancel_at_period_end: true });

    await t.app.inject({ method: 'POST', url: `/api/v1/communities/${s.communityId}/resume`, headers: s.creator.headers });
    await t.app.tasks.idle();
    expect((await t.stripe.subscriptions.retrieve(processorId, {}, { stripeAccount: s.account })).cancel_at_period_end).toBe(false);
    expect(await mirrorOf(processorId)).toMatchObject({ cancel_at_period_end: false });
  });
});

describe('reconciliation', () => {
  it('heals a mirror that lost webhooks and reports what it fixed', async () => {
    const s = await subscribe(t);
    const processorId = s.subscription.processor_subscription_id as string;
    const expected = await mirrorOf(processorId);
    // Drift: one row lost, one row wrong.
    await t.database.db.updateTable('subscriptions').set({ status: 'past_due', synced_seq: 0 }).where('processor_subscription_id', '=', processorId).execute();
    const other = await subscribe(t, { creator: s.creator });
    await forgetSubscription(other.subscription.processor_subscription_id);

    // Scoped to this creator: on a shared PostgreSQL, other test files' creators live at other simulators.
    const url = `/api/v1/admin/reconcile?creator_id=${s.creator.id}`;
    const res = await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.adminToken}` } });
    expect(res.statusCode).toBe(200);
    const report = json(res).data;
    expect(report.subscriptions_fixed).toBeGreaterThanOrEqual(2);
    expect(report.errors).toBe(0);
    expect(await mirrorOf(processorId)).toEqual(expected);
    expect(await mirrorOf(other.subscription.processor_subscription_id)).toMatchObject({ status: 'active' });
    const again = json(await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.adminToken}` } })).data;
    expect(again.subscriptions_fixed).toBe(0);
  });
});

describe('refunds made outside the API', () => {
  it('reach the mirror from charge.refunded, and reconciliation restores them when lost', async () => {
    const s = await subscribe(t, { priceCents: 6000 });
    // The payment comes with the invoice's own event, which may land after the subscription's.
    const paymentOf = () => t.database.db.selectFrom('payments').selectAll().where('subscription_id', '=', s.subscription.id).executeTakeFirst();
    await eventually(t, async () => expect(await paymentOf()).toBeDefined());
    const payment = (await paymentOf())!;
    expect(Number(payment.amount_cents)).toBe(6000);
    // As if the creator refunded in the processor's dashboard.
    const refund = await t.stripe.refunds.create({ payment_intent: payment.processor_payment_intent_id, amount: 2500 }, { stripeAccount: s.account });
    const mirrored = () => t.database.db.selectFrom('refunds').selectAll().where('processor_refund_id', '=', refund.id).executeTakeFirst();
    await eventually(t, async () => {
      expect(await mirrored()).toMatchObject({ subscription_id: s.subscription.id, amount_cents: 2500, status: 'succeeded' });
    });

    await t.database.db.deleteFrom('refunds').where('processor_refund_id', '=', refund.id).execute();
    const url = `/api/v1/admin/reconcile?creator_id=${s.creator.id}`;
    const report = json(await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.adminToken}` } })).data;
    expect(report.refunds_added).toBe(1);
    expect(await mirrored()).toMatchObject({ subscription_id: s.subscription.id, amount_cents: 2500 });
  });
});
