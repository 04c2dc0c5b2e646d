import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, openCheckout, pay, simHelper, subscriptionsOf } from '../../../test/billing-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { createPost, lockedFor } from '../../../test/posts-kit.js';

/** An upgrade whose prorated charge the card declines changes nothing (payment_behavior pending_if_incomplete). */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

async function tribe() {
  const creator = await createCreator(t);
  const community = await createCommunity(t, creator);
  const bronze = (await createTier(t, creator, community.id, { name: 'Bronze', price_cents: 1000 })).id;
  const gold = (await createTier(t, creator, community.id, { name: 'Gold', price_cents: 3000 })).id;
  const account = (await t.database.db.selectFrom('creators').select('processor_account_id').where('id', '=', creator.id).executeTakeFirstOrThrow()).processor_account_id!;
  const member = await createMember(t);
  const opened = await openCheckout(t, member, bronze);
  expect(opened.statusCode, opened.body).toBe(201);
  expect((await pay(t, json(opened).data.processor_session_id)).status).toBe(200);
  const [subscription] = await subscriptionsOf(t, creator, `?member_id=${member.id}`);
  const post = await createPost(t, creator, { community_id: community.id, tier_min_id: gold, content: 'Gold-only programming notes for the heavy block' });
  return { creator, communityId: community.id, bronze, gold, member, subscription: subscription!, post, opts: { stripeAccount: account } };
}

const changeTier = (member: TestMember, subscriptionId: string, tierId: string) =>
  t.app.inject({ method: 'POST', url: `/api/v1/member/subscriptions/${subscriptionId}/change-tier`, headers: member.headers, payload: { tier_id: tierId } });

const card = async (customer: string, fail: boolean) => expect((await simHelper(t, `customers/${customer}/payment_behavior`, { fail })).status).toBe(200);

async function holds(s: Awaited<ReturnType<typeof tribe>>, tierId: string, price: number) {
  const creatorView = await t.app.inject({ method: 'GET', url: `/api/v1/subscriptions/${s.subscription.id}`, headers: (s.creator as TestCreator).headers });
  expect(json(creatorView).data).toMatchObject({ status: 'active', tier_id: tierId, price_cents: price });
  const mine = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/subscriptions', headers: s.member.headers })).data as Array<Record<string, unknown>>;
  expect(mine.find((m) => m.id === s.subscription.id)).toMatchObject({ status: 'active', tier_id: tierId, price_cents: price });
}

describe('an upgrade the card declines', () => {
  it('is 402 payment_declined and changes nothing; after a new card the same request upgrades, its proration paid', async () => {
    const s = await tribe();
    const subId = s.subscription.processor_subscription_id as string;
    const before = await t.stripe.subscriptions.retrieve(subId, {}, s.opts);
    const customer = before.customer as string;
    await advanceDays(t, 5);
    await card(customer, true);

    const declined = await changeTier(s.member, s.subscription.id, s.gold);
    expect(declined.statusCode, declined.body).toBe(402);
    expect(json(declined).error).toMatchObject({ code: 'payment_declined' });
    expect(json(declined).error.message).toMatch(/declined.*tier did not change.*billing portal \(POST \/api\/v1\/member\/billing-portal\).*try the change again/);
    await t.app.tasks.idle();
    await holds(s, s.bronze, 1000);
    expect(await lockedFor(t, s.member, s.communityId, s.post.id)).toBe(true);
    const pending = await t.stripe.subscriptions.retrieve(subId, { expand: ['latest_invoice'] }, s.opts);
    expect(pending.status).toBe('active');
    expect(pending.items.data[0]!.price.id).toBe(before.items.data[0]!.price.id);
    expect(pending.pending_update).not.toBeNull();
    const declinedInvoice = pending.latest_invoice as Stripe.Invoice;
    expect(declinedInvoice).toMatchObject({ billing_reason: 'subscription_update', status: 'open' });

    await card(customer, false);
    const upgraded = await changeTier(s.member, s.subscription.id, s.gold);
    expect(upgraded.statusCode, upgraded.body).toBe(200);
    expect(json(upgraded).data).toMatchObject({ id: s.subscription.id, tier_id: s.gold, price_cents: 3000, status: 'active' });
    expect(await lockedFor(t, s.member, s.communityId, s.post.id)).toBe(false);
    await t.app.tasks.idle();
    await holds(s, s.gold, 3000);
    const after = await t.stripe.subscriptions.retrieve(subId, { expand: ['latest_invoice'] }, s.opts);
    expect(after.pending_update).toBeNull();
    expect(after.latest_invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid' });
    expect((after.latest_invoice as Stripe.Invoice).amount_paid).toBeGreaterThan(0);
    // The declined attempt's invoice was voided first: one upgrade paid, nothing left to collect.
    expect((await t.stripe.invoices.retrieve(declinedInvoice.id!, {}, s.opts)).status).toBe('void');
    const updates = (await t.stripe.invoices.list({ subscription: subId }, s.opts)).data.filter((i) => i.billing_reason === 'subscription_update');
    expect(updates.map((i) => i.status).sort()).toEqual(['paid', 'void']);
  });

  it('a new card in the billing portal pays the declined upgrade, which then applies: the mirror takes Gold from the pending_update_applied event', async () => {
    const s = await tribe();
    const subId = s.subscription.processor_subscription_id as string;
    const customer = (await t.stripe.subscriptions.retrieve(subId, {}, s.opts)).customer as string;
    await card(customer, true);
    expect((await changeTier(s.member, s.subscription.id, s.gold)).statusCode).toBe(402);
    await t.app.tasks.idle();
    await holds(s, s.bronze, 1000);

    const portal = await t.app.inject({ method: 'POST', url: '/api/v1/member/billing-portal', headers: s.member.headers, payload: { community_id: s.communityId } });
    expect(portal.statusCode, portal.body).toBe(201);
    const res = await fetch(`${json(portal).data.url}/card`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'payment_method=pm_card_visa' });
    expect(res.status).toBe(303);
    await t.app.tasks.idle();
    await holds(s, s.gold, 3000);
    expect(await lockedFor(t, s.member, s.communityId, s.post.id)).toBe(false);
    expect(await t.stripe.subscriptions.retrieve(subId, { expand: ['latest_invoice'] }, s.opts)).toMatchObject({ pending_update: null, latest_invoice: { billing_reason: 'subscription_update', status: 'paid' } });
  });

  it('left alone, the pending update lapses at the processor and the member stays on Bronze', async () => {
    const s = await tribe();
    const subId = s.subscription.processor_subscription_id as string;
    const customer = (await t.stripe.subscriptions.retrieve(subId, {}, s.opts)).customer as string;
    await card(customer, true);
    expect((await changeTier(s.member, s.subscription.id, s.gold)).statusCode).toBe(402);
    await advanceDays(t, 1);
    const lapsed = await t.stripe.subscriptions.retrieve(subId, { expand: ['latest_invoice'] }, s.opts);
    expect(lapsed).toMatchObject({ status: 'active', pending_update: null, latest_invoice: { status: 'void' } });
    await holds(s, s.bronze, 1000);
    expect(await lockedFor(t, s.member, s.communityId, s.post.id)).toBe(true);
  });
});
