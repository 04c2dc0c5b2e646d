import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, eventually, openCheckout, pay, subscriptionsOf } from '../../../test/billing-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { getMemberRecord } from '../../../test/members-kit.js';
import { asMember, createPost, lockedFor } from '../../../test/posts-kit.js';

/** Issue #28 item 2: members change tier, an upgrade now (prorated, invoiced at once), a downgrade at the period end. */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

const PRICES = { bronze: 1000, silver: 2000, gold: 3000 } as const;
type TierName = keyof typeof PRICES;

/** A creator with one community of three monthly tiers, Bronze < Silver < Gold, each trial `trialDays`. */
async function tribe(trialDays = 0) {
  const creator = await createCreator(t);
  const community = await createCommunity(t, creator);
  const tiers = {} as Record<TierName, string>;
  for (const name of Object.keys(PRICES) as TierName[]) {
    const label = name[0]!.toUpperCase() + name.slice(1);
    tiers[name] = (await createTier(t, creator, community.id, { name: label, price_cents: PRICES[name], trial_days: trialDays })).id;
  }
  const account = (await t.database.db.selectFrom('creators').select('processor_account_id').where('id', '=', creator.id).executeTakeFirstOrThrow()).processor_account_id!;
  return { creator, communityId: community.id, tiers, account, opts: { stripeAccount: account } };
}

/** A new member paying for `tierId` through hosted checkout; the subscription as the creator sees it. */
async function join(creator: TestCreator, tierId: string) {
  const member = await createMember(t);
  const opened = await openCheckout(t, member, tierId);
  expect(opened.statusCode, opened.body).toBe(201);
  expect((await pay(t, json(opened).data.processor_session_id)).status).toBe(200);
  const [subscription] = await subscriptionsOf(t, creator, `?member_id=${member.id}`);
  expect(subscription, 'the paid checkout should appear as a subscription').toBeDefined();
  return { member, subscription: subscription! };
}

const changeTier = (member: TestMember, subscriptionId: string, tierId: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1/member/subscriptions/${subscriptionId}/change-tier`, headers: { ...member.headers, ...headers }, payload: { tier_id: tierId } });

const creatorGet = async (creator: TestCreator, url: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
};

/** Stripe's rounding of a proration line: half up, to the cent. */
const roundHalfUp = (numerator: number, denominator: number) => Math.floor((2 * numerator + denominator) / (2 * denominator));
const itemOf = (s: Stripe.Subscription) => s.items.data[0]!;

describe('an upgrade', () => {
  it('from Bronze to Gold mid-period charges the prorated difference at once, keeps one live subscription and opens Gold posts with the answer', async () => {
    const { creator, communityId, tiers, opts } = await tribe();
    const { member, subscription } = await join(creator, tiers.bronze);
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.gold, content: 'Gold-only programming notes for the heavy block' });
    expect(await lockedFor(t, member, communityId, post.id)).toBe(true);
    await advanceDays(t, 10);

    const res = await changeTier(member, subscription.id, tiers.gold);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).data).toMatchObject({ id: subscription.id, tier_id: tiers.gold, tier_name: 'Gold', price_cents: 3000, status: 'active', scheduled_change: null });
    expect(await lockedFor(t, member, communityId, post.id)).toBe(false);

    const subs = await subscriptionsOf(t, creator, `?member_id=${member.id}`);
    expect(subs.map((s) => [s.id, s.status, s.tier_id])).toEqual([[subscription.id, 'active', tiers.gold]]);

    // By hand: credit the unused seconds of Bronze, charge them at Gold, each line rounded half up.
    const sub = await t.stripe.subscriptions.retrieve(subscription.processor_subscription_id, { expand: ['latest_invoice'] }, opts);
    const { current_period_start: start, current_period_end: end } = itemOf(sub);
    const invoice = sub.latest_invoice as Stripe.Invoice;
    const at = invoice.lines.data[0]!.period.start;
    expect(at - start).toBeGreaterThanOrEqual(10 * 86_400);
    const credit = roundHalfUp(PRICES.bronze * (end - at), end - start);
    const charge = roundHalfUp(PRICES.gold * (end - at), end - start);
    expect(invoice.lines.data.map((l) => l.amount).sort((a, b) => a - b)).toEqual([-credit, charge]);
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', total: charge - credit });
    expect(charge - credit).toBeGreaterThan(0);
    expect(charge - credit).toBeLessThan(PRICES.gold - PRICES.bronze);

    // The member's receipts name the tier each payment paid for (the invoice's event arrives a moment later).
    await eventually(t, async () => {
      const payments = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/payments', headers: member.headers })).data as Array<{ tier_name: string; amount_cents: number }>;
      expect(payments.map((p) => [p.tier_name, p.amount_cents])).toEqual([['Gold', charge - credit], ['Bronze', PRICES.bronze]]);
    });
  });

  it('from a monthly tier to a yearly one credits the unused month, charges the year at once and starts a yearly period', async () => {
    const { creator, communityId, tiers, opts } = await tribe();
    const yearly = await createTier(t, creator, communityId, { name: 'Yearly', price_cents: 30_000, billing_period: 'yearly' });
    const { member, subscription } = await join(creator, tiers.bronze);
    await advanceDays(t, 10);

    const res = await changeTier(member, subscription.id, yearly.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).data).toMatchObject({ tier_id: yearly.id, billing_period: 'yearly', price_cents: 30_000, status: 'active' });
    const sub = await t.stripe.subscriptions.retrieve(subscription.processor_subscription_id, { expand: ['latest_invoice'] }, opts);
    const invoice = sub.latest_invoice as Stripe.Invoice;
    const item = itemOf(sub);
    // A new billing cycle from the change: the whole year is charged, the unused month credited.
    expect(item.current_period_end - item.current_period_start).toBeGreaterThanOrEqual(365 * 86_400);
    expect(invoice.status).toBe('paid');
    expect(invoice.lines.data.map((l) => l.amount).sort((a, b) => a - b)).toEqual([expect.any(Number), 30_000]);
    expect(invoice.total).toBeGreaterThan(30_000 - PRICES.bronze);
    expect(invoice.total).toBeLessThan(30_000);
  });

  it('moves MRR and the tier mix to Gold the moment it takes effect, and the member record shows the change', async () => {
    const { creator, tiers } = await tribe();
    const { member, subscription } = await join(creator, tiers.bronze);
    expect((await creatorGet(creator, '/creator-metrics')).mrr_cents).toBe(1000);
    expect((await changeTier(member, subscription.id, tiers.gold)).statusCode).toBe(200);

    const metrics = await creatorGet(creator, '/creator-metrics');
    expect(metrics.mrr_cents).toBe(3000);
    const mix = Object.fromEntries((metrics.tier_mix as Array<{ tier_id: string; members: number; mrr_cents: number }>).map((m) => [m.tier_id, [m.members, m.mrr_cents]]));
    expect(mix).toMatchObject({ [tiers.gold]: [1, 3000], [tiers.bronze]: [0, 0] });
    const record = json(await getMemberRecord(t, creator, member.id)).data;
    const changes = record.subscription_history[0].changes as Array<{ tier_id: string; price_cents: number }>;
    expect(changes.map((c) => [c.tier_id, c.price_cents])).toContainEqual([tiers.bronze, 1000]);
    expect(changes.at(-1)).toMatchObject({ tier_id: tiers.gold, price_cents: 3000 });
  });

  it('with an Idempotency-Key, a retry replays the answer and charges once', async () => {
    const { creator, tiers, opts } = await tribe();
    const { member, subscription } = await join(creator, tiers.bronze);
    await advanceDays(t, 3);
    const key = { 'idempotency-key': `change-${subscription.id}` };
    const first = await changeTier(member, subscription.id, tiers.silver, key);
    const again = await changeTier(member, subscription.id, tiers.silver, key);
    expect(first.statusCode, first.body).toBe(200);
    expect(again.body).toBe(first.body);
    const invoices = await t.stripe.invoices.list({ subscription: subscription.processor_subscription_id }, opts);
    expect(invoices.data.filter((i) => i.billing_reason === 'subscription_update')).toHaveLength(1);
  });
});

describe('a downgrade', () => {
  it('from Gold to Bronze waits for the period end: the member keeps Gold, sees the scheduled change, then moves to Bronze (price, tier, MRR)', async () => {
    const { creator, communityId, tiers, opts } = await tribe();
    const { member, subscription } = await join(creator, tiers.gold);
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.gold, content: 'Gold-only programming notes for the heavy block' });

    const res = await changeTier(member, subscription.id, tiers.bronze);
    expect(res.statusCode, res.body).toBe(200);
    const periodEnd = subscription.current_period_end as string;
    expect(json(res).data).toMatchObject({ tier_id: tiers.gold, price_cents: 3000, scheduled_change: { tier_id: tiers.bronze, tier_name: 'Bronze', effective_at: periodEnd } });
    expect((await creatorGet(creator, `/subscriptions/${subscription.id}`)).scheduled_change).toEqual({ tier_id: tiers.bronze, effective_at: periodEnd });
    // Reconciliation lists subscriptions without their schedules: it keeps what the schedule said.
    await t.app.reconciler.run({ creatorId: creator.id });
    expect((await creatorGet(creator, `/subscriptions/${subscription.id}`)).scheduled_change).toEqual({ tier_id: tiers.bronze, effective_at: periodEnd });
    expect(await lockedFor(t, member, communityId, post.id)).toBe(false);
    expect((await creatorGet(creator, '/creator-metrics')).mrr_cents).toBe(3000);
    // Nothing charged now: the member paid for this period.
    const invoices = await t.stripe.invoices.list({ subscription: subscription.processor_subscription_id }, opts);
    expect(invoices.data.filter((i) => i.billing_reason === 'subscription_update')).toHaveLength(0);

    await advanceDays(t, 32);
    await eventually(t, async () => {
      expect(await creatorGet(creator, `/subscriptions/${subscription.id}`)).toMatchObject({ status: 'active', tier_id: tiers.bronze, price_cents: 1000, scheduled_change: null });
    });
    expect((await creatorGet(creator, '/creator-metrics')).mrr_cents).toBe(1000);
    expect(await lockedFor(t, member, communityId, post.id)).toBe(true);
    const renewal = (await t.stripe.invoices.list({ subscription: subscription.processor_subscription_id, limit: 1 }, opts)).data[0]!;
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', total: 1000 });
  });

  it('is dropped by changing back to the current tier, replaced by another downgrade, and released by an upgrade', async () => {
    const { creator, tiers, opts } = await tribe();
    const { member, subscription } = await join(creator, tiers.silver);
    const scheduleOf = async () => (await t.stripe.subscriptions.retrieve(subscription.processor_subscription_id, {}, opts)).schedule;

    expect(json(await changeTier(member, subscription.id, tiers.bronze)).data.scheduled_change).toMatchObject({ tier_id: tiers.bronze });
    const back = await changeTier(member, subscription.id, tiers.silver);
    expect(back.statusCode, back.body).toBe(200);
    expect(json(back).data).toMatchObject({ tier_id: tiers.silver, scheduled_change: null });
    expect(await scheduleOf()).toBeNull();
    // With nothing scheduled any more, the current tier is the same tier again.
    expect(json(await changeTier(member, subscription.id, tiers.silver)).error.code).toBe('same_tier');

    expect(json(await changeTier(member, subscription.id, tiers.bronze)).data.scheduled_change).toMatchObject({ tier_id: tiers.bronze });
    const up = await changeTier(member, subscription.id, tiers.gold);
    expect(up.statusCode, up.body).toBe(200);
    expect(json(up).data).toMatchObject({ tier_id: tiers.gold, price_cents: 3000, scheduled_change: null });
    expect(await scheduleOf()).toBeNull();

    expect(json(await changeTier(member, subscription.id, tiers.silver)).data.scheduled_change).toMatchObject({ tier_id: tiers.silver, tier_name: 'Silver' });
    const lower = await changeTier(member, subscription.id, tiers.bronze);
    expect(lower.statusCode, lower.body).toBe(200);
    expect(json(lower).data).toMatchObject({ tier_id: tiers.gold, scheduled_change: { tier_id: tiers.bronze, tier_name: 'Bronze' } });
  });

  it("does not stop the creator's cancel at period end, which drops it", async () => {
    const { creator, tiers, opts } = await tribe();
    const { member, subscription } = await join(creator, tiers.gold);
    expect((await changeTier(member, subscription.id, tiers.bronze)).statusCode).toBe(200);
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscription.id}/cancel`, headers: creator.headers, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).data).toMatchObject({ cancel_at_period_end: true, tier_id: tiers.gold, scheduled_change: null });
    expect((await t.stripe.subscriptions.retrieve(subscription.processor_subscription_id, {}, opts)).schedule).toBeNull();
  });
});

describe('a paused community', () => {
  it('sets a subscription with a scheduled downgrade to cancel at period end, dropping the downgrade', async () => {
    const { creator, communityId, tiers, opts } = await tribe();
    const { member, subscription } = await join(creator, tiers.gold);
    expect((await changeTier(member, subscription.id, tiers.bronze)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${communityId}`, headers: creator.headers })).statusCode).toBe(200);
    await eventually(t, async () => {
      expect(await creatorGet(creator, `/subscriptions/${subscription.id}`)).toMatchObject({ cancel_at_period_end: true, tier_id: tiers.gold, scheduled_change: null });
    });
    expect((await t.stripe.subscriptions.retrieve(subscription.processor_subscription_id, {}, opts)).schedule).toBeNull();
  });
});

describe('during a trial', () => {
  it('a member changes tier now, up or down, without a charge', async () => {
    const { creator, tiers, opts } = await tribe(14);
    const { member, subscription } = await join(creator, tiers.bronze);
    expect(subscription.status).toBe('trialing');
    const up = await changeTier(member, subscription.id, tiers.gold);
    expect(up.statusCode, up.body).toBe(200);
    expect(json(up).data).toMatchObject({ status: 'trialing', tier_id: tiers.gold, price_cents: 3000, scheduled_change: null });
    const down = await changeTier(member, subscription.id, tiers.silver);
    expect(json(down).data).toMatchObject({ status: 'trialing', tier_id: tiers.silver, price_cents: 2000, scheduled_change: null });
    const invoices = await t.stripe.invoices.list({ subscription: subscription.processor_subscription_id }, opts);
    expect(invoices.data.map((i) => i.total)).toEqual(invoices.data.map(() => 0));
    expect((await creatorGet(creator, '/creator-metrics')).mrr_cents).toBe(0);
  });
});

describe('refusals', () => {
  it('answer 409 for the same tier, an inactive tier, a paused community, an ended subscription and one set to cancel at period end', async () => {
    const { creator, communityId, tiers } = await tribe();
    const { member, subscription } = await join(creator, tiers.silver);
    const code = async (tierId: string, id = subscription.id) => {
      const res = await changeTier(member, id, tierId);
      expect(res.statusCode, res.body).toBe(409);
      return json(res).error.code as string;
    };
    expect(await code(tiers.silver)).toBe('same_tier');
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/tiers/${tiers.gold}`, headers: creator.headers })).statusCode).toBe(200);
    expect(await code(tiers.gold)).toBe('tier_inactive');

    const other = await join(creator, tiers.bronze);
    const cancel = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${other.subscription.id}/cancel`, headers: creator.headers, payload: {} });
    expect(cancel.statusCode).toBe(200);
    expect(json(await changeTier(other.member, other.subscription.id, tiers.silver)).error.code).toBe('subscription_canceling');
    const ended = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${other.subscription.id}/cancel`, headers: creator.headers, payload: { immediate: true } });
    expect(ended.statusCode).toBe(200);
    expect(json(await changeTier(other.member, other.subscription.id, tiers.silver)).error.code).toBe('subscription_canceled');

    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${communityId}`, headers: creator.headers })).statusCode).toBe(200);
    await t.app.tasks.idle();
    expect(await code(tiers.bronze)).toBe('community_paused');
  });

  it("answer 404 for another member's subscription and for a tier of another community or creator, never saying which", async () => {
    const { creator, tiers } = await tribe();
    const { member, subscription } = await join(creator, tiers.silver);
    const sibling = await createTier(t, creator, (await createCommunity(t, creator)).id, { name: 'Elsewhere', price_cents: 9000 });
    const stranger = await tribe();
    const intruder = await createMember(t);
    for (const [who, tierId] of [
      [member, sibling.id],
      [member, stranger.tiers.gold],
      [member, '0190a0a0-0000-7000-8000-000000000000'],
      [intruder, tiers.gold],
    ] as const) {
      const res = await changeTier(who, subscription.id, tierId);
      expect(res.statusCode, res.body).toBe(404);
      expect(json(res).error.code).toBe('not_found');
    }
    expect((await asMember(t, member, 'GET', '/subscriptions')).statusCode).toBe(200);
  });
});
