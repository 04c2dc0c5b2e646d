import crypto from 'node:crypto';
import Stripe from 'stripe';
import { sleep } from '../../test/crash/server.js';
import { SECRET_KEY } from './nodes.js';

/**
 * The proof's data, made through the API as the README's first tour does (and as the crash
 * suite's set-up does): a creator onboarded at the simulator, a community, a yearly tier, a
 * webhook endpoint, members who paid through hosted checkout, a manual payout schedule and
 * funds available (8 days on the simulator clock), so refunds and payouts of the crash load
 * are valid. Small on purpose: one creator, 10 members.
 */

export const BENCH_PRESS_ID = '33b0a54f-7196-43fb-90b5-067f42ea28b6';
export const BACK_SQUAT_ID = '8d6e0d29-b751-4980-8f65-2f3e409be336';
const PRICE_CENTS = 100_000;

import { call, chargeOfEach } from '../../test/crash/http.js';

export { call };
export type { ApiAnswer } from '../../test/crash/http.js';

export async function created(base: string, url: string, opts: { auth?: string; body?: unknown }): Promise<any> {
  const res = await call(base, 'POST', url, opts);
  if (res.status !== 201) throw new Error(`set-up POST ${url}: expected 201, got ${res.status} ${res.text}`);
  return res.json.data;
}

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export interface Creator {
  id: string;
  authorization: string;
  account: string;
}

/** A creator made by the operator (admin API); onboarded at the simulator when asked. */
export async function makeCreator(lb: string, simPort: number, adminToken: string, label: string, onboard = false): Promise<Creator> {
  const tag = crypto.randomBytes(4).toString('hex');
  const made = await created(lb, '/api/v1/admin/creators', { auth: `Bearer ${adminToken}`, body: { name: `Cluster ${label}`, email: `cluster-${label}-${tag}@example.com` } });
  const creator = { id: made.creator.id as string, authorization: `Bearer ${made.api_key}`, account: made.creator.processor_account_id as string };
  if (onboard) await simHelper(simPort, `accounts/${creator.account}/onboard`, {});
  return creator;
}

export async function simHelper(simPort: number, helper: string, body: object): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${simPort}/v1/test_helpers/${helper}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET_KEY}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`simulator ${helper}: ${res.status} ${text}`);
}

/**
 * `count` members who sign up and pay for a tier through hosted checkout, once their
 * subscriptions are active in the mirror (the processor's events reach the nodes through the
 * balancer, PROCESSOR_WEBHOOK_URL).
 */
export async function payingMembers(lb: string, simPort: number, o: { auth: string; tierId: string; label: string; count: number }) {
  const members = await Promise.all(
    Array.from({ length: o.count }, async (_, i) => {
      const signed = await created(lb, '/api/v1/member/signup', {
        body: { name: `Cluster Member ${i}`, email: `cluster-${o.label}-m${i}@example.com`, password: `pw-${o.label}-long-enough-${i}` },
      });
      return { id: signed.member.id as string, authorization: `Bearer ${signed.token}` };
    }),
  );
  for (const m of members) {
    const session = await created(lb, '/api/v1/member/checkout-sessions', { auth: m.authorization, body: { tier_id: o.tierId } });
    await simHelper(simPort, `checkout_sessions/${session.processor_session_id}/complete`, { payment_method: 'pm_card_visa' });
  }
  let subs: any[] = [];
  await until(`${o.count} active subscriptions`, async () => {
    const res = await call(lb, 'GET', `/api/v1/subscriptions?limit=100&tier_id=${o.tierId}`, { auth: o.auth });
    subs = (res.json?.data ?? []).filter((s: any) => s.status === 'active');
    return subs.length === o.count;
  });
  return { members, subs };
}

export interface ProofData {
  runId: string;
  stripe: Stripe;
  creator: Creator;
  communityId: string;
  members: Array<{ id: string; authorization: string }>;
  subscriptions: Array<{ id: string; charge: string }>;
  endpointId: string;
}

export async function makeProofData(lb: string, simPort: number, adminToken: string, receiverUrl: string, memberCount: number): Promise<ProofData> {
  const runId = crypto.randomBytes(4).toString('hex');
  const stripe = new Stripe(SECRET_KEY, { host: '127.0.0.1', port: simPort, protocol: 'http', maxNetworkRetries: 2 });
  const creator = await makeCreator(lb, simPort, adminToken, 'coach', true);
  const auth = creator.authorization;
  const community = await created(lb, '/api/v1/communities', { auth, body: { name: 'Cluster Gym', slug: `cluster-${runId}-home`, category: 'musculacao' } });
  const endpoint = await created(lb, '/api/v1/webhook-endpoints', { auth, body: { url: receiverUrl, events: ['workout.logged', 'challenge.finished', 'payment.succeeded'] } });
  const tier = await created(lb, '/api/v1/tiers', { auth, body: { community_id: community.id, name: 'Yearly', price_cents: PRICE_CENTS, billing_period: 'yearly' } });
  const { members, subs } = await payingMembers(lb, simPort, { auth, tierId: tier.id, label: runId, count: memberCount });
  await stripe.accounts.update(creator.account, { settings: { payouts: { schedule: { interval: 'manual' } } } });
  await until('the manual payout schedule', async () => (await call(lb, 'GET', '/api/v1/payouts/balance', { auth })).json?.data?.payout_schedule === 'manual');
  await simHelper(simPort, 'clock/advance', { seconds: 8 * 86_400 });
  const net = memberCount * (PRICE_CENTS - PRICE_CENTS / 10);
  await until('the available balance', async () => (await call(lb, 'GET', '/api/v1/payouts/balance', { auth })).json?.data?.available_cents === net);
  const subscriptions = (await chargeOfEach(stripe, creator.account, subs)).map(({ id, charge }) => ({ id, charge }));
  return { runId, stripe, creator, communityId: community.id, members, subscriptions, endpointId: endpoint.id };
}
