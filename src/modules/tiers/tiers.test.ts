import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/ids.js';
import { buildTestApp, createCommunity, createCreator, json, uniq, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { addMember, mirrorSubscription } from '../../../test/members-kit.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const call = (creator: TestCreator, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: creator.headers, ...(payload === undefined ? {} : { payload }) });

async function setup() {
  const creator = await createCreator(t);
  const community = await createCommunity(t, creator);
  const account = (await t.database.db.selectFrom('creators').select('processor_account_id').where('id', '=', creator.id).executeTakeFirstOrThrow())
    .processor_account_id!;
  return { creator, community, account };
}

async function createTier(creator: TestCreator, communityId: string, overrides: object = {}) {
  const res = await call(creator, 'POST', '/api/v1/tiers', { community_id: communityId, name: 'Pro', price_cents: 4990, billing_period: 'monthly', ...overrides });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data;
}

describe('tiers', () => {
  it("creates the tier's product and recurring price at the processor on the creator's account", async () => {
    const { creator, community, account } = await setup();
    const tier = await createTier(creator, community.id, { billing_period: 'quarterly', trial_days: 7, benefits: ['Weekly plan', 'Chat'] });
    expect(tier).toMatchObject({
      community_id: community.id,
      name: 'Pro',
      price_cents: 4990,
      currency: 'brl',
      billing_period: 'quarterly',
      trial_days: 7,
      benefits: ['Weekly plan', 'Chat'],
      is_active: true,
      level: null,
      active_subscribers: 0,
    });
    const price = await t.stripe.prices.retrieve(tier.processor_price_id, {}, { stripeAccount: account });
    expect(price).toMatchObject({ unit_amount: 4990, currency: 'brl', active: true, product: tier.processor_product_id });
    expect(price.recurring).toMatchObject({ interval: 'month', interval_count: 3 });
    const yearly = await createTier(creator, community.id, { billing_period: 'yearly', price_cents: 49900 });
    const yearlyPrice = await t.stripe.prices.retrieve(yearly.processor_price_id, {}, { stripeAccount: account });
    expect(yearlyPrice.recurring).toMatchObject({ interval: 'year', interval_count: 1 });
  });

  it('gives every creator a connected account at the processor', async () => {
    const { account } = await setup();
    expect(account).toMatch(/^acct_/);
    const retrieved = await t.stripe.accounts.retrieve(account);
    expect(retrieved.id).toBe(account);
  });

  it('refuses a tier in a paused community with 409 community_paused', async () => {
    const { creator, community } = await setup();
    await call(creator, 'DELETE', `/api/v1/communities/${community.id}`);
    const res = await call(creator, 'POST', '/api/v1/tiers', { community_id: community.id, name: 'X', price_cents: 1000, billing_period: 'monthly' });
    expect(res.statusCode).toBe(409);
    expect(json(res).error.code).toBe('community_paused');
  });

  it("answers 404 when the community is another creator's", async () => {
    const { community } = await setup();
    const intruder = await createCreator(t);
    const res = await call(intruder, 'POST', '/api/v1/tiers', { community_id: community.id, name: 'X', price_cents: 1000, billing_period: 'monthly' });
    expect(res.statusCode).toBe(404);
  });

  it('validates price, period, trial and benefits', async () => {
    const { creator, community } = await setup();
    const res = await call(creator, 'POST', '/api/v1/tiers', {
      community_id: community.id,
      name: 'Bad',
      price_cents: 99.5,
      billing_period: 'weekly',
      trial_days: 731,
      benefits: Array.from({ length: 21 }, () => 'b'),
    });
    expect(res.statusCode).toBe(400);
    const fields = json(res).error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['price_cents', 'billing_period', 'trial_days', 'benefits']));
  });

  it('creates a new processor price on a price change and archives the old one, keeping both on record', async () => {
    const { creator, community, account } = await setup();
    const tier = await createTier(creator, community.id);
    const res = await call(creator, 'PATCH', `/api/v1/tiers/${tier.id}`, { price_cents: 5990 });
    expect(res.statusCode).toBe(200);
    const updated = json(res).data;
    expect(updated.price_cents).toBe(5990);
    expect(updated.processor_price_id).not.toBe(tier.processor_price_id);
    const [oldPrice, newPrice] = await Promise.all([
      t.stripe.prices.retrieve(tier.processor_price_id, {}, { stripeAccount: account }),
      t.stripe.prices.retrieve(updated.processor_price_id, {}, { stripeAccount: account }),
    ]);
    expect(oldPrice).toMatchObject({ unit_amount: 4990, active: false });
    expect(newPrice).toMatchObject({ unit_amount: 5990, active: true });
    const history = await t.database.db.selectFrom('tier_prices').selectAll().where('tier_id', '=', tier.id).orderBy('created_at').execute();
    expect(history.map((h) => Number(h.price_cents))).toEqual([4990, 5990]);
  });

  it('keeps the price when PATCH repeats it, and changes name and benefits in place', async () => {
    const { creator, community, account } = await setup();
    const tier = await createTier(creator, community.id);
    const res = await call(creator, 'PATCH', `/api/v1/tiers/${tier.id}`, { price_cents: 4990, name: 'Elite', benefits: [] });
    const updated = json(res).data;
    expect(updated).toMatchObject({ processor_price_id: tier.processor_price_id, name: 'Elite', benefits: [] });
    const product = await t.stripe.products.retrieve(tier.processor_product_id, {}, { stripeAccount: account });
    expect(product.name).toBe('Elite');
  });

  it('deactivates on DELETE (price archived), refuses a price change while inactive, and reactivates by PATCH', async () => {
    const { creator, community, account } = await setup();
    const tier = await createTier(creator, community.id);
    const deleted = await call(creator, 'DELETE', `/api/v1/tiers/${tier.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(json(deleted).data.is_active).toBe(false);
    expect((await t.stripe.prices.retrieve(tier.processor_price_id, {}, { stripeAccount: account })).active).toBe(false);
    expect(json(await call(creator, 'DELETE', `/api/v1/tiers/${tier.id}`)).data.is_active).toBe(false);

    const refused = await call(creator, 'PATCH', `/api/v1/tiers/${tier.id}`, { price_cents: 9990 });
    expect(refused.statusCode).toBe(409);
    expect(json(refused).error.code).toBe('tier_inactive');

    const back = await call(creator, 'PATCH', `/api/v1/tiers/${tier.id}`, { is_active: true });
    expect(json(back).data).toMatchObject({ is_active: true, price_cents: 4990 });
    expect((await t.stripe.prices.retrieve(tier.processor_price_id, {}, { stripeAccount: account })).active).toBe(true);
  });

  it('lists tiers filtered by community and activity, and 404s a community that is not yours', async () => {
    const { creator, community } = await setup();
    const other = await createCommunity(t, creator);
    const a = await createTier(creator, community.id);
    const b = await createTier(creator, community.id, { is_active: false });
    await createTier(creator, other.id);
    const inCommunity = json(await call(creator, 'GET', `/api/v1/tiers?community_id=${community.id}`));
    expect(inCommunity.data.map((x: { id: string }) => x.id)).toEqual([b.id, a.id]);
    expect(inCommunity.pagination.total).toBe(2);
    const active = json(await call(creator, 'GET', `/api/v1/tiers?community_id=${community.id}&is_active=true`));
    expect(active.data.map((x: { id: string }) => x.id)).toEqual([a.id]);
    expect(json(await call(creator, 'GET', '/api/v1/tiers')).pagination.total).toBe(3);
    const stranger = await createCreator(t);
    expect((await call(stranger, 'GET', `/api/v1/tiers?community_id=${community.id}`)).statusCode).toBe(404);
  });

  it('counts active_subscribers from the subscriptions it holds', async () => {
    const { creator, community } = await setup();
    const tier = await createTier(creator, community.id);
    const db = t.database.db;
    for (const status of ['active', 'active', 'trialing', 'canceled', 'past_due'] as const) {
      const memberId = newId();
      await db.insertInto('members').values({ id: memberId, name: 'M', email: `m-${uniq()}@example.com` }).execute();
      await db
        .insertInto('subscriptions')
        .values({ id: newId(), creator_id: creator.id, community_id: community.id, tier_id: tier.id, member_id: memberId, status, price_cents: 4990, billing_period: 'monthly' })
        .execute();
    }
    // Written around the mirror, as reconciliation finds data: its rebuild brings the counters up to date.
    expect(json(await call(creator, 'GET', `/api/v1/tiers/${tier.id}`)).data.active_subscribers).toBe(0);
    await db.transaction().execute((trx) => t.app.metricsCounters.rebuild(creator.id, trx));
    expect(json(await call(creator, 'GET', `/api/v1/tiers/${tier.id}`)).data.active_subscribers).toBe(2);
    const c = json(await call(creator, 'GET', `/api/v1/communities/${community.id}`)).data;
    expect(c).toMatchObject({ active_subscribers: 2, members_count: 4, mrr_cents: 3 * 4990 });
  });

  it('moves active_subscribers, members_count and mrr_cents with each change the mirror applies', async () => {
    const { creator, community } = await setup();
    const [basic, pro] = [await createTier(creator, community.id, { name: 'Basic', price_cents: 1000 }), await createTier(creator, community.id, { name: 'Pro', price_cents: 3000 })];
    const figures = async () => {
      const tiers = json(await call(creator, 'GET', `/api/v1/tiers?community_id=${community.id}`)).data as Array<{ id: string; active_subscribers: number }>;
      const c = json(await call(creator, 'GET', `/api/v1/communities/${community.id}`)).data;
      const byId = Object.fromEntries(tiers.map((x) => [x.id, x.active_subscribers]));
      return { basic: byId[basic.id], pro: byId[pro.id], members: c.members_count, active: c.active_subscribers, mrr: c.mrr_cents };
    };
    const a = await addMember(t);
    const b = await addMember(t);
    const at = (tier: { id: string }, memberId: string) => ({ communityId: community.id, tierId: tier.id, memberId });
    const sa = await mirrorSubscription(t, creator, at(basic, a), { status: 'active', priceCents: 1000 });
    const sb = await mirrorSubscription(t, creator, at(pro, b), { status: 'trialing', priceCents: 3000 });
    expect(await figures()).toEqual({ basic: 1, pro: 0, members: 2, active: 1, mrr: 1000 });
    await mirrorSubscription(t, creator, { ...at(pro, b), id: sb }, { status: 'active', priceCents: 3000 });
    await mirrorSubscription(t, creator, at(pro, a), { status: 'active', priceCents: 3000 });
    expect(await figures()).toEqual({ basic: 1, pro: 2, members: 2, active: 3, mrr: 7000 });
    // past_due still pays (MRR) but is not active; a canceled one is neither.
    await mirrorSubscription(t, creator, { ...at(basic, a), id: sa }, { status: 'past_due', priceCents: 1000 });
    await mirrorSubscription(t, creator, { ...at(pro, b), id: sb }, { status: 'canceled', priceCents: 3000, endedAt: new Date() });
    expect(await figures()).toEqual({ basic: 0, pro: 1, members: 1, active: 1, mrr: 4000 });
    // The counters the mirror kept are what a rebuild from scratch computes.
    expect(await t.database.db.transaction().execute((trx) => t.app.metricsCounters.rebuild(creator.id, trx))).toBe(0);
  });
});

describe('tiers when the processor is down', () => {
  it('answers 502 processor_error and creates nothing', async () => {
    const local = await buildTestApp();
    try {
      const creator = await createCreator(local);
      const community = await createCommunity(local, creator);
      await local.simulator.close();
      const res = await local.app.inject({
        method: 'POST',
        url: '/api/v1/tiers',
        headers: creator.headers,
        payload: { community_id: community.id, name: 'X', price_cents: 1000, billing_period: 'monthly' },
      });
      expect(res.statusCode).toBe(502);
      expect(json(res).error.code).toBe('processor_error');
      const rows = await local.database.db.selectFrom('tiers').select('id').where('creator_id', '=', creator.id).execute();
      expect(rows).toEqual([]);
      const admin = await local.app.inject({
        method: 'POST',
        url: '/api/v1/admin/creators',
        headers: { authorization: `Bearer ${local.adminToken}` },
        payload: { name: 'Late', email: `late-${uniq()}@example.com` },
      });
      expect(admin.statusCode).toBe(502);
    } finally {
      await local.close();
    }
  });
});
