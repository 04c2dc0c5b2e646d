import pino from 'pino';
import { expect } from 'vitest';
import { createSubscriptionSync } from '../src/modules/subscriptions/sync.js';
import { createCommunity, createCreator, createMember, createTier, json, type TestApp, type TestCreator, type TestMember } from './helpers.js';

/** Calls one of the simulator's test helpers (DESIGN §6) the way an outside test suite would. */
export async function simHelper(t: TestApp, path: string, body: object = {}): Promise<Response> {
  return fetch(`${t.simulator.url}/v1/test_helpers/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk_test_tribes' },
    body: JSON.stringify(body),
  });
}

/** Moves the simulator clock; the events it causes are delivered before this returns, then processed. */
export async function advanceDays(t: TestApp, days: number): Promise<void> {
  const res = await simHelper(t, 'clock/advance', { seconds: Math.round(days * 86_400) });
  expect(res.status).toBe(200);
  await t.app.tasks.idle();
}

export async function openCheckout(t: TestApp, member: TestMember, tierId: string) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/member/checkout-sessions', headers: member.headers, payload: { tier_id: tierId } });
  return res;
}

export async function pay(t: TestApp, processorSessionId: string, card: 'pm_card_visa' | 'pm_card_chargeDeclined' = 'pm_card_visa') {
  const res = await simHelper(t, `checkout_sessions/${processorSessionId}/complete`, { payment_method: card });
  await t.app.tasks.idle();
  return res;
}

export async function subscriptionsOf(t: TestApp, creator: TestCreator, query = '') {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/subscriptions${query}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Array<Record<string, any>>;
}

export interface Subscribed {
  creator: TestCreator;
  member: TestMember;
  communityId: string;
  tierId: string;
  account: string;
  subscription: Record<string, any>;
}

/**
 * A creator, a community with one tier, and a member who paid through hosted checkout; the
 * subscription as the creator API shows it. `mirror: 'reconcile'` pulls it in through
 * reconciliation instead of webhooks (for apps that do not listen).
 */
export async function subscribe(
  t: TestApp,
  opts: { trialDays?: number; priceCents?: number; billingPeriod?: string; creator?: TestCreator; mirror?: 'webhooks' | 'reconcile' } = {},
): Promise<Subscribed> {
  const creator = opts.creator ?? (await createCreator(t));
  const community = await createCommunity(t, creator);
  const tier = await createTier(t, creator, community.id, {
    price_cents: opts.priceCents ?? 5000,
    billing_period: opts.billingPeriod ?? 'monthly',
    trial_days: opts.trialDays ?? 0,
  });
  const member = await createMember(t);
  const opened = await openCheckout(t, member, tier.id);
  expect(opened.statusCode, opened.body).toBe(201);
  const paid = await pay(t, json(opened).data.processor_session_id);
  expect(paid.status).toBe(200);
  if (opts.mirror === 'reconcile') await t.app.reconciler.run({ creatorId: creator.id });
  const [subscription] = await subscriptionsOf(t, creator, `?tier_id=${tier.id}`);
  expect(subscription, 'the paid checkout should appear as a subscription').toBeDefined();
  const account = (await t.database.db.selectFrom('creators').select('processor_account_id').where('id', '=', creator.id).executeTakeFirstOrThrow())
    .processor_account_id!;
  return { creator, member, communityId: community.id, tierId: tier.id, account, subscription: subscription! };
}

/**
 * Waits until `check` passes: events caused by ordinary processor API calls (not by clock
 * advances or test helpers) are delivered asynchronously, a few milliseconds later. The limit is
 * generous (it only bounds a failure; a pass returns at once): on a slow 2-core machine running
 * two test files at a time, an invoice's event once took over 5 s to arrive.
 */
export async function eventually(t: TestApp, check: () => Promise<void>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await t.app.tasks.idle();
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * Before the app's next `method` call reaches the processor, does what an event's mirror write
 * may do at that moment (webhooks/handlers.ts): reads the subscription — numbered now, after
 * any number the service took before its call — and writes it into the mirror. The read holds
 * the subscription from before the call; a service that answers from the mirror must not.
 */
export function eventReadBeforeNext(t: TestApp, s: Subscribed, method: 'setCancelAtPeriodEnd' | 'cancelNow'): void {
  const sync = createSubscriptionSync({ db: t.database.db, processor: t.processor, logger: pino({ level: 'silent' }) });
  const original = t.processor[method] as (...args: unknown[]) => Promise<unknown>;
  (t.processor as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    (t.processor as unknown as Record<string, unknown>)[method] = original;
    const read = await sync.read(s.account, s.subscription.processor_subscription_id as string);
    await t.database.db.transaction().execute((trx) => sync.apply(trx, s.account, read));
    return original(...args);
  };
}
