import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { lockProcessorObject } from '../../db/locks.js';
import { advanceDays, eventReadBeforeNext, openCheckout, pay, simHelper, subscribe, subscriptionsOf } from '../../../test/billing-kit.js';
import { buildTestApp, openTestDatabase, createCommunity, createCreator, createMember, createTier, json, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

const get = (s: { creator: { headers: Record<string, string> } }, id: string) =>
  t.app.inject({ method: 'GET', url: `/api/v1/subscriptions/${id}`, headers: s.creator.headers });

describe('subscriptions through hosted checkout', () => {
  it('turns a paid checkout into an active subscription the creator sees, with its figures', async () => {
    const s = await subscribe(t, { priceCents: 3000, billingPeriod: 'quarterly' });
    expect(s.subscription).toMatchObject({
      tier_id: s.tierId,
      community_id: s.communityId,
      member_id: s.member.id,
      status: 'active',
      price_cents: 3000,
      billing_period: 'quarterly',
      cancel_at_period_end: false,
      processor_subscription_id: expect.stringMatching(/^sub_/),
    });
    expect(new Date(s.subscription.current_period_end).getTime()).toBeGreaterThan(new Date(s.subscription.current_period_start).getTime());
    const community = json(await t.app.inject({ method: 'GET', url: `/api/v1/communities/${s.communityId}`, headers: s.creator.headers })).data;
    expect(community).toMatchObject({ members_count: 1, active_subscribers: 1, mrr_cents: 1000 });
    const own = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/subscriptions', headers: s.member.headers })).data;
    expect(own).toEqual([expect.objectContaining({ id: s.subscription.id, status: 'active', tier_id: s.tierId })]);
  });

  it('starts a trial as trialing and turns it active when the trial ends and the charge succeeds', async () => {
    const s = await subscribe(t, { trialDays: 7 });
    expect(s.subscription.status).toBe('trialing');
    expect(s.subscription.trial_end).toBeTruthy();
    await advanceDays(t, 8);
    expect(json(await get(s, s.subscription.id)).data.status).toBe('active');
  });

  it('gives no subscription for a declined card', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const tier = await createTier(t, creator, community.id);
    const member = await createMember(t);
    const opened = json(await openCheckout(t, member, tier.id)).data;
    const paid = await pay(t, opened.processor_session_id, 'pm_card_chargeDeclined');
    expect(paid.status).toBe(402);
    expect(await subscriptionsOf(t, creator)).toEqual([]);
  });

  it('goes past_due when a renewal fails and canceled after the retries', async () => {
    const s = await subscribe(t);
    const customer = (await t.database.db.selectFrom('subscriptions').select('processor_customer_id').where('id', '=', s.subscription.id).executeTakeFirstOrThrow())
      .processor_customer_id!;
    expect((await simHelper(t, `customers/${customer}/payment_behavior`, { fail: true })).status).toBe(200);
    await advanceDays(t, 32);
    expect(json(await get(s, s.subscription.id)).data.status).toBe('past_due');
    const withPastDue = json(await t.app.inject({ method: 'GET', url: `/api/v1/communities/${s.communityId}`, headers: s.creator.headers })).data;
    expect(withPastDue.mrr_cents).toBe(5000);
    await advanceDays(t, 8);
    const ended = json(await get(s, s.subscription.id)).data;
    expect(ended.status).toBe('canceled');
  });

  it('refuses checkout for a paused community, an inactive tier, or a tier already held', async () => {
    const s = await subscribe(t);
    const again = await openCheckout(t, s.member, s.tierId);
    expect(again.statusCode).toBe(409);
    expect(json(again).error.code).toBe('already_subscribed');
    const other = await createMember(t);
    await t.app.inject({ method: 'DELETE', url: `/api/v1/tiers/${s.tierId}`, headers: s.creator.headers });
    expect(json(await openCheckout(t, other, s.tierId)).error.code).toBe('tier_inactive');
    await t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${s.communityId}`, headers: s.creator.headers });
    expect(json(await openCheckout(t, other, s.tierId)).error.code).toBe('community_paused');
  });
});

describe('cancel', () => {
  it('at period end keeps access, stores the reason for the creator only, and ends at the period end', async () => {
    const s = await subscribe(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${s.subscription.id}/cancel`,
      headers: s.creator.headers,
      payload: { reason: 'asked by e-mail' },
    });
    expect(res.statusCode).toBe(200);
    expect(json(res).data).toMatchObject({ status: 'active', cancel_at_period_end: true, cancellation_reason: 'asked by e-mail' });
    const own = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/subscriptions', headers: s.member.headers })).data;
    expect(JSON.stringify(own)).not.toContain('asked by e-mail');
    await advanceDays(t, 32);
    expect(json(await get(s, s.subscription.id)).data.status).toBe('canceled');
  });

  it('immediately when asked, and answers 409 when already canceled', async () => {
    const s = await subscribe(t);
    const url = `/api/v1/subscriptions/${s.subscription.id}/cancel`;
    const res = await t.app.inject({ method: 'POST', url, headers: s.creator.headers, payload: { immediate: true } });
    expect(json(res).data).toMatchObject({ status: 'canceled' });
    const again = await t.app.inject({ method: 'POST', url, headers: s.creator.headers, payload: {} });
    expect(again.statusCode).toBe(409);
    expect(json(again).error.code).toBe('subscription_canceled');
  });

  it("answers the cancel it made, at period end or now, though an event's read from before it reached the mirror first", async () => {
    for (const [immediate, method, expected] of [
      [false, 'setCancelAtPeriodEnd', { status: 'active', cancel_at_period_end: true }],
      [true, 'cancelNow', { status: 'canceled' }],
    ] as const) {
      const s = await subscribe(t);
      eventReadBeforeNext(t, s, method);
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/cancel`, headers: s.creator.headers, payload: { immediate } });
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res).data).toMatchObject(expected);
    }
  });

  // Two transactions interleaving needs two connections: the embedded database has one.
  it.skipIf(!inject('postgresUrl'))('with a reason, while an event of the same subscription is being mirrored, waits its turn instead of deadlocking', async () => {
    const s = await subscribe(t);
    const processorId = s.subscription.processor_subscription_id as string;
    // The event's transaction on a pool of its own: held open on the app's, it would starve the
    // simulator's delivery of the cancel's own events.
    const side = await openTestDatabase();
    let go!: () => void;
    const proceed = new Promise<void>((resolve) => (go = resolve));
    try {
      // What an event's mirror write (sync.apply) does: the processor object's lock, then its row
      // for update. The row is asked for only once the cancel waits on that lock.
      let started!: (pid: number) => void;
      const holding = new Promise<number>((resolve) => (started = resolve));
      const event = side.db.transaction().execute(async (trx) => {
        await lockProcessorObject(trx, processorId);
        started((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid);
        await proceed;
        await trx.selectFrom('subscriptions').select('id').where('processor_subscription_id', '=', processorId).forUpdate().execute();
      });
      const pid = await holding;
      // Started now: inject() sends nothing until its answer is asked for.
      const cancel = Promise.resolve(t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/cancel`, headers: s.creator.headers, payload: { reason: 'asked by phone' } }));
      // Until the cancel's transaction waits on the lock: the processor has taken the cancel (the
      // simulator's own tables are not locked here), then a moment for its answer to reach the
      // transaction. Polled here, not through the app's tasks: the simulator's events wait too.
      let taken: number | undefined;
      for (const deadline = Date.now() + 15_000; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
        if (Date.now() > deadline) throw new Error('the cancel never reached the lock');
        if (taken === undefined && (await t.stripe.subscriptions.retrieve(processorId, {}, { stripeAccount: s.account })).cancel_at_period_end) taken = Date.now();
        if (taken === undefined || Date.now() - taken < 300) continue;
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event = 'advisory' and ${pid}::int = any(pg_blocking_pids(pid))`.execute(side.db);
        if (rows[0]!.n > 0) break;
      }
      go();
      await event;
      const res = await cancel;
      expect(res.statusCode).toBe(200);
      expect(json(res).data).toMatchObject({ cancel_at_period_end: true, cancellation_reason: 'asked by phone' });
    } finally {
      go();
      await side.close();
    }
  });
});

describe('refund', () => {
  it('refunds the last payment once and only once, with the DESIGN result shape', async () => {
    const s = await subscribe(t, { priceCents: 4990 });
    const url = `/api/v1/subscriptions/${s.subscription.id}/refund`;
    const first = await t.app.inject({ method: 'POST', url, headers: s.creator.headers });
    expect(first.statusCode).toBe(201);
    expect(json(first).data).toEqual({
      id: expect.any(String),
      subscription_id: s.subscription.id,
      amount_cents: 4990,
      currency: 'brl',
      status: 'succeeded',
      processor_refund_id: expect.stringMatching(/^re_/),
      created_at: expect.stringMatching(/Z$/),
    });
    const second = await t.app.inject({ method: 'POST', url, headers: s.creator.headers });
    expect(second.statusCode).toBe(409);
    expect(json(second).error.code).toBe('nothing_to_refund');
  });

  it('refunds part, refuses more than remains with 422, and lets exactly one of two concurrent full refunds succeed', async () => {
    const s = await subscribe(t, { priceCents: 5000 });
    const url = `/api/v1/subscriptions/${s.subscription.id}/refund`;
    const part = await t.app.inject({ method: 'POST', url, headers: s.creator.headers, payload: { amount_cents: 1500 } });
    expect(json(part).data.amount_cents).toBe(1500);
    const tooMuch = await t.app.inject({ method: 'POST', url, headers: s.creator.headers, payload: { amount_cents: 4000 } });
    expect(tooMuch.statusCode).toBe(422);
    const [a, b] = await Promise.all([
      t.app.inject({ method: 'POST', url, headers: s.creator.headers }),
      t.app.inject({ method: 'POST', url, headers: s.creator.headers }),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([201, 409]);
    const winner = [a, b].find((r) => r.statusCode === 201)!;
    expect(json(winner).data.amount_cents).toBe(3500);
  });

  it('has nothing to refund during a trial', async () => {
    const s = await subscribe(t, { trialDays: 14 });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/refund`, headers: s.creator.headers });
    expect(res.statusCode).toBe(409);
  });
});

describe('subscription list and isolation', () => {
  it('filters by community, tier, member and status, and hides other creators\' subscriptions', async () => {
    const s = await subscribe(t);
    const second = await subscribe(t, { creator: s.creator, trialDays: 3 });
    expect((await subscriptionsOf(t, s.creator)).length).toBe(2);
    expect((await subscriptionsOf(t, s.creator, '?status=trialing')).map((x) => x.id)).toEqual([second.subscription.id]);
    expect((await subscriptionsOf(t, s.creator, `?community_id=${s.communityId}`)).map((x) => x.id)).toEqual([s.subscription.id]);
    expect((await subscriptionsOf(t, s.creator, `?member_id=${second.member.id}`)).map((x) => x.id)).toEqual([second.subscription.id]);
    const stranger = await createCreator(t);
    expect(await subscriptionsOf(t, stranger)).toEqual([]);
    for (const [method, url] of [
      ['GET', `/api/v1/subscriptions/${s.subscription.id}`],
      ['POST', `/api/v1/subscriptions/${s.subscription.id}/cancel`],
      ['POST', `/api/v1/subscriptions/${s.subscription.id}/refund`],
    ] as const) {
      expect((await t.app.inject({ method, url, headers: stranger.headers, ...(method === 'POST' ? { payload: {} } : {}) })).statusCode).toBe(404);
    }
  });
});
