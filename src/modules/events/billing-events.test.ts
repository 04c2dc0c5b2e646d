import pino from 'pino';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, simHelper, subscribe, type Subscribed } from '../../../test/billing-kit.js';
import { createEndpoint, startReceiver, verified } from '../../../test/events-kit.js';
import { buildTestApp, createCreator, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { createSubscriptionSync } from '../subscriptions/sync.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

const get = async (creator: TestCreator, url: string) => json(await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: creator.headers })).data;

/** A creator with an endpoint that wants every type, and its receiver. */
async function listening() {
  const creator = await createCreator(t);
  const receiver = await startReceiver();
  const endpoint = await createEndpoint(t, creator, { url: receiver.url });
  const events = async (type: string) => {
    await t.app.events.drain({ creatorIds: [creator.id] });
    return receiver.ofType(type).map((r) => verified(endpoint.secret, r));
  };
  return { creator, receiver, events };
}

/** The mirror writes a processor read of the subscription with `status` instead of what the simulator holds. */
async function processorSays(s: Subscribed, status: Stripe.Subscription.Status) {
  const sync = createSubscriptionSync({ db: t.database.db, processor: t.processor, logger: pino({ level: 'silent' }) });
  const read = await sync.read(s.account, s.subscription.processor_subscription_id);
  await t.database.db.transaction().execute((trx) => sync.apply(trx, s.account, { seq: read.seq, subscription: { ...read.subscription, status } }));
}

/** The account's payout schedule, changed at the processor and mirrored from its account.updated. */
async function setSchedule(s: Subscribed, interval: 'manual' | 'daily') {
  await t.stripe.accounts.update(s.account, { settings: { payouts: { schedule: { interval } } } });
  await t.app.tasks.idle();
}

describe('billing events', () => {
  it('sends subscription.created, member.joined and payment.succeeded once for a paid checkout, and nothing for a re-sync that finds no change', async () => {
    const { creator, receiver, events } = await listening();
    const s = await subscribe(t, { creator, priceCents: 5000 });
    const api = await get(creator, `/subscriptions/${s.subscription.id}`);

    const created = await events('subscription.created');
    expect(created).toHaveLength(1);
    expect(created[0]!.data).toEqual({ ...api, previous_attributes: {} });
    const joined = await events('member.joined');
    expect(joined.map((e) => e.data)).toEqual([
      { member_id: s.member.id, community_id: s.communityId, subscription_id: api.id, tier_id: s.tierId, status: api.status, at: expect.any(String) },
    ]);
    const paid = await events('payment.succeeded');
    expect(paid).toHaveLength(1);
    expect(paid[0]!.data).toMatchObject({ subscription_id: api.id, member_id: s.member.id, tier_id: s.tierId, gross_cents: 5000, currency: 'brl' });
    const { fee_cents: fee, net_cents: net } = paid[0]!.data as { fee_cents: number | null; net_cents: number | null };
    if (fee !== null) expect(net).toBe(5000 - fee);

    // Reconciliation re-reads everything: the same state sends nothing more.
    const before = receiver.received.length;
    await t.app.reconciler.run({ creatorId: creator.id });
    await t.app.events.drain({ creatorIds: [creator.id] });
    expect(receiver.received.slice(before).map((r) => r.payload.type)).toEqual([]);
    await receiver.close();
  });

  it('sends subscription.updated with what changed, subscription.canceled and member.left for an immediate cancel, and refund.created once for its refund', async () => {
    const { creator, receiver, events } = await listening();
    const s = await subscribe(t, { creator });
    const cancel = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/cancel`, headers: creator.headers, payload: { immediate: true, reason: 'Moving abroad' } });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const refund = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/refund`, headers: creator.headers, payload: {} });
    expect(refund.statusCode, refund.body).toBe(201);
    await t.app.tasks.idle();
    const api = await get(creator, `/subscriptions/${s.subscription.id}`);

    const canceled = await events('subscription.canceled');
    expect(canceled).toHaveLength(1);
    const { previous_attributes: previous, ...now } = canceled[0]!.data as Record<string, any>;
    // The subscription as the API shows it, the creator's cancellation reason included.
    expect(now).toEqual(api);
    expect(now.cancellation_reason).toBe('Moving abroad');
    expect(previous).toMatchObject({ status: 'active' });
    expect(previous).not.toHaveProperty('member_id');
    const updated = await events('subscription.updated');
    expect(updated.map((e) => e.data.status)).toContain('canceled');
    expect((await events('member.left')).map((e) => e.data)).toEqual([expect.objectContaining({ member_id: s.member.id, community_id: s.communityId, status: 'canceled' })]);

    const refunds = await events('refund.created');
    expect(refunds).toHaveLength(1);
    const apiRefund = json(refund).data;
    expect(refunds[0]!.data).toEqual({
      refund_id: apiRefund.id,
      subscription_id: apiRefund.subscription_id,
      amount_cents: apiRefund.amount_cents,
      currency: apiRefund.currency,
      status: apiRefund.status,
      processor_refund_id: apiRefund.processor_refund_id,
      created_at: apiRefund.created_at,
    });
    await receiver.close();
  });

  it('sends subscription.past_due once when the mirror reads the status twice, and no member.left: a past-due member keeps access', async () => {
    const { creator, receiver, events } = await listening();
    const s = await subscribe(t, { creator });
    await processorSays(s, 'past_due');
    await processorSays(s, 'past_due');
    const pastDue = await events('subscription.past_due');
    expect(pastDue).toHaveLength(1);
    expect(pastDue[0]!.data).toMatchObject({ id: s.subscription.id, status: 'past_due', previous_attributes: { status: 'active' } });
    expect(await events('member.left')).toEqual([]);
    await receiver.close();
  });

  it('sends payment.failed and subscription.past_due when the processor fails to charge a renewal', async () => {
    const { creator, receiver, events } = await listening();
    const s = await subscribe(t, { creator, priceCents: 4000 });
    const { processor_customer_id: customer } = await t.database.db.selectFrom('subscriptions').select('processor_customer_id').where('id', '=', s.subscription.id).executeTakeFirstOrThrow();
    const failing = await fetch(`${t.simulator.url}/v1/test_helpers/customers/${customer}/payment_behavior`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk_test_tribes', 'stripe-account': s.account },
      body: JSON.stringify({ fail: true }),
    });
    expect(failing.status).toBe(200);
    await advanceDays(t, 32);
    const failed = await events('payment.failed');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed[0]!.data).toMatchObject({ subscription_id: s.subscription.id, member_id: s.member.id, tier_id: s.tierId, amount_due_cents: 4000, currency: 'brl', attempt_count: 1 });
    const api = await get(creator, `/subscriptions/${s.subscription.id}`);
    const pastDue = await events('subscription.past_due');
    expect(pastDue).toHaveLength(1);
    expect(pastDue[0]!.data).toMatchObject({ id: api.id, status: 'past_due', previous_attributes: { status: 'active' } });
    await receiver.close();
  });

  it('sends payout.failed with the payout as the API shows it', async () => {
    const { creator, receiver, events } = await listening();
    const s = await subscribe(t, { creator, priceCents: 10_000, billingPeriod: 'yearly' });
    await setSchedule(s, 'manual');
    await advanceDays(t, 8);
    const manual = await t.app.inject({ method: 'POST', url: '/api/v1/payouts/manual', headers: creator.headers, payload: { amount_cents: 5000 } });
    expect(manual.statusCode, manual.body).toBe(201);
    const payout = json(manual).data;
    expect((await simHelper(t, `payouts/${payout.processor_payout_id}/fail`)).status).toBe(200);
    await t.app.tasks.idle();
    const failed = await events('payout.failed');
    expect(failed.map((e) => e.data)).toEqual([await get(creator, `/payouts/${payout.id}`)]);
    await receiver.close();
  });

  it('sends payout.paid once for an automatic payout that reaches the bank, and nothing more when reconciliation re-reads it', async () => {
    const { creator, receiver, events } = await listening();
    const s = await subscribe(t, { creator, priceCents: 10_000, billingPeriod: 'yearly' });
    await setSchedule(s, 'daily');
    await advanceDays(t, 11);
    const paid = json(await t.app.inject({ method: 'GET', url: '/api/v1/payouts?status=paid', headers: creator.headers })).data as Array<{ id: string }>;
    expect(paid.length).toBeGreaterThanOrEqual(1);
    const sent = await events('payout.paid');
    expect(sent.map((e) => e.data).sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual(
      await Promise.all(paid.map((p) => get(creator, `/payouts/${p.id}`))).then((all) => all.sort((a, b) => String(a.id).localeCompare(String(b.id)))),
    );
    await t.app.reconciler.run({ creatorId: creator.id });
    expect(await events('payout.paid')).toHaveLength(sent.length);
    await receiver.close();
  });

  it('sends account.updated with the new status and what it was before when requirements come due', async () => {
    const { creator, receiver, events } = await listening();
    const { processor_account_id: account } = await get(creator, '/account');
    expect((await simHelper(t, `accounts/${account}/requirements`, { currently_due: ['individual.verification.document'], deadline_seconds: 86_400 })).status).toBe(200);
    await t.app.tasks.idle();
    const updated = await events('account.updated');
    expect(updated).toHaveLength(1);
    const api = await get(creator, '/account');
    expect(updated[0]!.data).toMatchObject({
      status: api.status,
      currently_due: ['individual.verification.document'],
      previous_attributes: { status: 'active', currently_due: [] },
    });
    await receiver.close();
  });
});
