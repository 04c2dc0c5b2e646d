import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCheckout, pay, subscribe } from '../../../test/billing-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

/** A community selling Bronze and Gold, and a member who has not joined it yet. */
async function bronzeAndGold() {
  const creator = await createCreator(t);
  const community = await createCommunity(t, creator);
  const bronze = await createTier(t, creator, community.id, { name: 'Bronze', price_cents: 2000 });
  const gold = await createTier(t, creator, community.id, { name: 'Gold', price_cents: 6000 });
  return { bronze, gold, member: await createMember(t) };
}

describe('one live subscription per member and community', () => {
  it('refuses a checkout for another tier of a community the member holds a live subscription in, naming the tier change', async () => {
    const s = await subscribe(t);
    const yearly = await createTier(t, s.creator, s.communityId, { name: 'Pro yearly', billing_period: 'yearly', price_cents: 50_000 });
    const res = await openCheckout(t, s.member, yearly.id);
    expect(res.statusCode, res.body).toBe(409);
    const { error } = json(res);
    expect(error.code).toBe('already_member');
    expect(error.message).toContain(`POST /api/v1/member/subscriptions/${s.subscription.id}/change-tier`);
  });

  it('still answers already_subscribed for the same tier', async () => {
    const s = await subscribe(t);
    const res = await openCheckout(t, s.member, s.tierId);
    expect(res.statusCode).toBe(409);
    expect(json(res).error.code).toBe('already_subscribed');
  });

  it("lets the member check out in another community of the same creator", async () => {
    const s = await subscribe(t);
    const other = await createCommunity(t, s.creator);
    const tier = await createTier(t, s.creator, other.id);
    const res = await openCheckout(t, s.member, tier.id);
    expect(res.statusCode, res.body).toBe(201);
  });

  it('lets a member whose subscription was canceled check out for another tier of the community', async () => {
    const s = await subscribe(t);
    const cancel = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/cancel`, headers: s.creator.headers, payload: { immediate: true } });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const other = await createTier(t, s.creator, s.communityId, { name: 'Elite', price_cents: 9000 });
    const res = await openCheckout(t, s.member, other.id);
    expect(res.statusCode, res.body).toBe(201);
  });

  it('closes the earlier checkout of the community when another opens, so two tabs cannot both be paid', async () => {
    const { bronze, gold, member } = await bronzeAndGold();
    const first = json(await openCheckout(t, member, bronze.id)).data;
    const second = await openCheckout(t, member, gold.id);
    expect(second.statusCode, second.body).toBe(201);
    // The first tab's session can no longer be paid; the second one can.
    expect((await pay(t, first.processor_session_id)).status).toBe(400);
    expect((await pay(t, json(second).data.processor_session_id)).status).toBe(200);
  });

  it('refuses a new checkout when the earlier one of the community was paid before its subscription arrived', async () => {
    const { bronze, gold, member } = await bronzeAndGold();
    const first = json(await openCheckout(t, member, bronze.id)).data;
    // Paid at the processor; the mirror has not seen it (its row is dropped here to stand for a late event).
    expect((await pay(t, first.processor_session_id)).status).toBe(200);
    await t.database.db.deleteFrom('community_members').where('member_id', '=', member.id).execute();
    await t.database.db.updateTable('subscriptions').set({ status: 'canceled' }).where('member_id', '=', member.id).execute();
    await t.database.db.updateTable('checkout_sessions').set({ status: 'open' }).where('processor_session_id', '=', first.processor_session_id).execute();
    const res = await openCheckout(t, member, gold.id);
    expect(res.statusCode, res.body).toBe(409);
    expect(json(res).error.code).toBe('already_member');
  });
});
