import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, eventReadBeforeNext, eventually, subscribe, type Subscribed } from '../../../test/billing-kit.js';
import { buildTestApp, createMember, createTier, json, type TestApp, type TestMember } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

const act = (member: TestMember, id: string, action: 'cancel' | 'resume', headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1/member/subscriptions/${id}/${action}`, headers: { ...member.headers, ...headers } });

const atProcessor = async (s: Subscribed) =>
  t.stripe.subscriptions.retrieve(s.subscription.processor_subscription_id as string, {}, { stripeAccount: s.account });

describe('a member cancels and resumes', () => {
  it('cancels at period end at the processor, keeps access, and resumes before the end', async () => {
    const s = await subscribe(t);
    const canceled = await act(s.member, s.subscription.id, 'cancel');
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(json(canceled).data).toMatchObject({ id: s.subscription.id, status: 'active', cancel_at_period_end: true, tier_id: s.tierId });
    expect((await atProcessor(s)).cancel_at_period_end).toBe(true);
    const mine = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/subscriptions', headers: s.member.headers })).data;
    expect(mine).toEqual([json(canceled).data]);

    const resumed = await act(s.member, s.subscription.id, 'resume');
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(json(resumed).data).toMatchObject({ status: 'active', cancel_at_period_end: false });
    expect((await atProcessor(s)).cancel_at_period_end).toBe(false);
  });

  it('answers a second cancel or resume unchanged', async () => {
    const s = await subscribe(t);
    const first = json(await act(s.member, s.subscription.id, 'cancel')).data;
    const again = await act(s.member, s.subscription.id, 'cancel');
    expect(again.statusCode).toBe(200);
    expect(json(again).data).toEqual(first);
    await act(s.member, s.subscription.id, 'resume');
    const twice = await act(s.member, s.subscription.id, 'resume');
    expect(twice.statusCode).toBe(200);
    expect(json(twice).data.cancel_at_period_end).toBe(false);
  });

  it('replays a keyed cancel, sending the processor a key derived from the request', async () => {
    const s = await subscribe(t);
    const calls: Array<string | undefined> = [];
    const original = t.processor.setCancelAtPeriodEnd;
    t.processor.setCancelAtPeriodEnd = (account, id, cancel, key) => {
      calls.push(key);
      return original(account, id, cancel, key);
    };
    try {
      const headers = { 'idempotency-key': `cancel-${s.subscription.id}` };
      const first = await act(s.member, s.subscription.id, 'cancel', headers);
      const replay = await act(s.member, s.subscription.id, 'cancel', headers);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(first.body);
      expect(calls).toEqual([expect.stringMatching(/^tribes-member-cancel-/)]);
    } finally {
      t.processor.setCancelAtPeriodEnd = original;
    }
  });

  it('drops a pending downgrade when the member cancels (the processor refuses a cancel while a schedule holds the subscription)', async () => {
    const s = await subscribe(t, { priceCents: 5000 });
    const cheaper = await createTier(t, s.creator, s.communityId, { name: 'Basic', price_cents: 2000 });
    const downgrade = await t.app.inject({ method: 'POST', url: `/api/v1/member/subscriptions/${s.subscription.id}/change-tier`, headers: s.member.headers, payload: { tier_id: cheaper.id } });
    expect(downgrade.statusCode, downgrade.body).toBe(200);
    expect((await atProcessor(s)).schedule).toBeTruthy();
    const canceled = await act(s.member, s.subscription.id, 'cancel');
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(json(canceled).data).toMatchObject({ cancel_at_period_end: true, tier_id: s.tierId });
    expect(await atProcessor(s)).toMatchObject({ cancel_at_period_end: true, schedule: null });
  });

  it("answers the cancel and the resume it made though an event's read from before each reached the mirror first", async () => {
    const s = await subscribe(t);
    eventReadBeforeNext(t, s, 'setCancelAtPeriodEnd');
    const canceled = await act(s.member, s.subscription.id, 'cancel');
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(json(canceled).data).toMatchObject({ cancel_at_period_end: true });
    eventReadBeforeNext(t, s, 'setCancelAtPeriodEnd');
    const resumed = await act(s.member, s.subscription.id, 'resume');
    expect(json(resumed).data).toMatchObject({ cancel_at_period_end: false });
    const mine = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/subscriptions', headers: s.member.headers })).data;
    expect(mine).toEqual([json(resumed).data]);
  });

  it("refuses to resume a subscription its creator canceled: the creator's cancel wins", async () => {
    const s = await subscribe(t);
    const byCreator = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/cancel`, headers: s.creator.headers, payload: {} });
    expect(byCreator.statusCode, byCreator.body).toBe(200);
    const res = await act(s.member, s.subscription.id, 'resume');
    expect(res.statusCode).toBe(409);
    expect(json(res).error).toMatchObject({ code: 'subscription_canceled', message: expect.stringContaining('creator canceled') });
    expect((await atProcessor(s)).cancel_at_period_end).toBe(true);
  });

  it('refuses to resume while the community is paused, and keeps a cancel made during the pause after the community resumes', async () => {
    const s = await subscribe(t);
    const paused = await t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${s.communityId}`, headers: s.creator.headers });
    expect(paused.statusCode, paused.body).toBe(200);
    await eventually(t, async () => expect((await atProcessor(s)).cancel_at_period_end).toBe(true));
    const res = await act(s.member, s.subscription.id, 'resume');
    expect(res.statusCode).toBe(409);
    expect(json(res).error.code).toBe('community_paused');

    expect((await act(s.member, s.subscription.id, 'cancel')).statusCode).toBe(200);
    const resumed = await t.app.inject({ method: 'POST', url: `/api/v1/communities/${s.communityId}/resume`, headers: s.creator.headers });
    expect(resumed.statusCode, resumed.body).toBe(200);
    await t.app.tasks.idle();
    expect((await atProcessor(s)).cancel_at_period_end).toBe(true);
  });

  it("answers 404 for another member's subscription and 409 for one that has ended", async () => {
    const s = await subscribe(t);
    const stranger = await createMember(t);
    for (const action of ['cancel', 'resume'] as const) {
      const res = await act(stranger, s.subscription.id, action);
      expect(res.statusCode).toBe(404);
      expect(json(res).error.code).toBe('not_found');
    }
    await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/cancel`, headers: s.creator.headers, payload: { immediate: true } });
    const ended = await act(s.member, s.subscription.id, 'cancel');
    expect(ended.statusCode).toBe(409);
    expect(json(ended).error.code).toBe('subscription_canceled');
  });
});

describe("a member's payments", () => {
  it('lists the payments newest first with a partial refund, and only the member’s own', async () => {
    const s = await subscribe(t, { priceCents: 5000 });
    await advanceDays(t, 31); // the first renewal: a second payment, refunded below
    const refund = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/refund`, headers: s.creator.headers, payload: { amount_cents: 1200 } });
    expect(refund.statusCode, refund.body).toBe(201);
    await eventually(t, async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/member/payments', headers: s.member.headers });
      expect(res.statusCode).toBe(200);
      expect(json(res).pagination).toMatchObject({ page: 1, total: 2 });
      const [renewal, first] = json(res).data;
      expect(new Date(renewal.paid_at).getTime()).toBeGreaterThan(new Date(first.paid_at).getTime());
      expect(first).toMatchObject({ amount_cents: 5000, refunded_cents: 0, status: 'paid', refunds: [] });
      expect([renewal]).toEqual([
        expect.objectContaining({
          subscription_id: s.subscription.id,
          community_id: s.communityId,
          tier_id: s.tierId,
          amount_cents: 5000,
          refunded_cents: 1200,
          status: 'partially_refunded',
          refunds: [expect.objectContaining({ amount_cents: 1200, status: 'succeeded' })],
        }),
      ]);
    });
    const stranger = await createMember(t);
    expect(json(await t.app.inject({ method: 'GET', url: '/api/v1/member/payments', headers: stranger.headers })).data).toEqual([]);
  });
});
