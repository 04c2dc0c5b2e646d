import { sql } from 'kysely';
import { pino } from 'pino';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../../../test/billing-kit.js';
import { buildTestApp, createCreator, createProgram, json, mintMember, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { createPost, lockedFor } from '../../../test/posts-kit.js';
import { addMember, exportMembers, getMemberRecord, idsOf, listMembers, mirrorSubscription, placeIn, type Place } from '../../../test/members-kit.js';
import type { SubscriptionStatus } from '../../db/types.js';
import { LIVE_STATUSES, SUBSCRIPTION_STATUSES } from './status.js';
import { createSubscriptionSync } from './sync.js';

/**
 * Issue #26 item 2, access only while paying: the processor's incomplete, incomplete_expired,
 * unpaid and paused are kept as they are and give no access; past_due (dunning) still does.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const NOT_LIVE = ['incomplete', 'incomplete_expired', 'unpaid', 'paused'] as const;
const DAY_MS = 86_400_000;

const creatorGet = (creator: TestCreator, url: string) => t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: creator.headers });

/** A processor read of the subscription with `status` instead of what the simulator holds, written by the mirror. */
async function processorSays(account: string, processorSubscriptionId: string, status: Stripe.Subscription.Status) {
  const sync = createSubscriptionSync({ db: t.database.db, processor: t.processor, logger: pino({ level: 'silent' }) });
  const read = await sync.read(account, processorSubscriptionId);
  await t.database.db.transaction().execute((trx) => sync.apply(trx, account, { seq: read.seq, subscription: { ...read.subscription, status } }));
}

async function summary(creator: TestCreator) {
  const res = await creatorGet(creator, '/creator-metrics');
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
}

describe('subscription statuses that give no access', () => {
  it('defines live the same way in SQL and TypeScript, for every status the mirror stores', async () => {
    const { rows } = await sql<{ status: string; live: boolean }>`select s as status, subscription_live(s) as live
      from unnest(${[...SUBSCRIPTION_STATUSES]}::text[]) as s`.execute(t.database.db);
    expect(rows.filter((r) => r.live).map((r) => r.status)).toEqual([...LIVE_STATUSES]);
  });

  it('mirrors unpaid, paused, incomplete and incomplete_expired as they are, and shows them so on the subscription and the member record', async () => {
    const s = await subscribe(t, { mirror: 'reconcile' });
    for (const status of NOT_LIVE) {
      await processorSays(s.account, s.subscription.processor_subscription_id, status);
      const sub = json(await creatorGet(s.creator, `/subscriptions/${s.subscription.id}`)).data;
      expect(sub.status).toBe(status);
      const record = json(await getMemberRecord(t, s.creator, s.member.id)).data;
      expect(record.subscriptions.map((x: { status: string }) => x.status)).toEqual([status]);
      // Nothing else is live: the member counts as gone.
      expect(record.status).toBe('churned');
    }
    await processorSays(s.account, s.subscription.processor_subscription_id, 'past_due');
    expect(json(await getMemberRecord(t, s.creator, s.member.id)).data.status).toBe('at_risk');
  });

  it('corrects a subscription at the next reconciliation when the processor lists it as unpaid', async () => {
    const s = await subscribe(t, { mirror: 'reconcile' });
    const listed = t.processor.allSubscriptions;
    t.processor.allSubscriptions = async function* (account: string) {
      for await (const sub of listed(account)) yield { ...sub, status: 'unpaid' as const };
    };
    try {
      await t.app.reconciler.run({ creatorId: s.creator.id });
    } finally {
      t.processor.allSubscriptions = listed;
    }
    expect(json(await creatorGet(s.creator, `/subscriptions/${s.subscription.id}`)).data.status).toBe('unpaid');
    expect((await summary(s.creator)).active_subscribers).toBe(0);
  });

  it('takes unpaid, paused and incomplete subscriptions out of MRR and the paying members, and keeps past_due in them', async () => {
    const s = await subscribe(t, { mirror: 'reconcile', priceCents: 3000 });
    const paying = { active_subscribers: 1, mrr_cents: 3000, trialing: 0 };
    expect(await summary(s.creator)).toMatchObject(paying);
    for (const status of ['unpaid', 'paused', 'incomplete'] as const) {
      await processorSays(s.account, s.subscription.processor_subscription_id, status);
      expect(await summary(s.creator), status).toMatchObject({ active_subscribers: 0, mrr_cents: 0, trialing: 0 });
      const community = json(await creatorGet(s.creator, `/communities/${s.communityId}`)).data;
      expect(community, status).toMatchObject({ members_count: 0, mrr_cents: 0, active_subscribers: 0 });
      await processorSays(s.account, s.subscription.processor_subscription_id, 'past_due');
      expect(await summary(s.creator), `past_due after ${status}`).toMatchObject(paying);
    }
    // The counters kept by the mirror agree with a recomputation from scratch.
    expect(await t.app.metricsCounters.reconcile(s.creator.id, t.database.db)).toBe(0);
  });

  it('counts a member whose only subscription became unpaid as lost, and one who never paid as never gained', async () => {
    const s = await subscribe(t, { mirror: 'reconcile' });
    await processorSays(s.account, s.subscription.processor_subscription_id, 'unpaid');
    expect((await summary(s.creator)).growth_30d).toMatchObject({ new_subscribers: 1, lost_subscribers: 1, net_growth: 0 });

    const place = await placeIn(t, s.creator);
    const member = await addMember(t);
    await mirrorSubscription(t, s.creator, { ...place, memberId: member }, { status: 'incomplete' });
    const community = json(await creatorGet(s.creator, `/creator-metrics/${place.communityId}`)).data;
    expect(community.growth_30d).toMatchObject({ new_subscribers: 0, lost_subscribers: 0 });
    expect(await t.app.metricsCounters.reconcile(s.creator.id, t.database.db)).toBe(0);
  });

  it('lists a member whose subscriptions are none of them live as churned, and one with another live subscription by that one', async () => {
    const creator = await createCreator(t);
    const [a, b] = [await placeIn(t, creator), await placeIn(t, creator)];
    const lapsed = await addMember(t, { name: 'Lapsed Member' });
    await mirrorSubscription(t, creator, { ...a, memberId: lapsed }, { status: 'paused', createdAt: new Date(Date.now() - 3 * DAY_MS) });
    const both = await addMember(t, { name: 'Both Member' });
    await mirrorSubscription(t, creator, { ...a, memberId: both }, { status: 'unpaid', createdAt: new Date(Date.now() - 3 * DAY_MS) });
    await mirrorSubscription(t, creator, { ...b, memberId: both }, { status: 'trialing' });

    const churned = await listMembers(t, creator, '?status=churned');
    expect(idsOf(churned)).toEqual([lapsed]);
    expect(churned.data[0]!.subscriptions.map((x: { status: string }) => x.status)).toEqual(['paused']);
    expect(idsOf(await listMembers(t, creator, '?status=trial'))).toEqual([both]);
    const csv = await exportMembers(t, creator, '?status=churned');
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.body).toContain('Basic: paused');
    // Within the community of the unpaid one, that member is churned too.
    expect(idsOf(await listMembers(t, creator, `?status=churned&community_id=${a.communityId}`)).sort()).toEqual([lapsed, both].sort());
  });
});

describe('what a member whose subscription gives no access can do', () => {
  async function memberWith(status: SubscriptionStatus) {
    const s = await subscribe(t, { mirror: 'reconcile' });
    const member = await mintMember(t);
    const place: Place = { communityId: s.communityId, tierId: s.tierId };
    await mirrorSubscription(t, s.creator, { ...place, memberId: member.id }, { status });
    return { ...s, place, reader: member };
  }

  it('cannot open the programs of a community whose subscription is unpaid, paused or incomplete, and can while past_due', async () => {
    for (const status of ['unpaid', 'paused', 'incomplete', 'past_due'] as const) {
      const s = await memberWith(status);
      const program = await createProgram(t, s.creator, s.communityId);
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/member/programs/${program.id}`, headers: s.reader.headers });
      expect(res.statusCode, `${status}: ${res.body}`).toBe(status === 'past_due' ? 200 : 403);
    }
  });

  it('reads a tier post locked while the subscription is unpaid, paused or incomplete, and in full while past_due', async () => {
    for (const status of ['unpaid', 'paused', 'incomplete', 'past_due'] as const) {
      const s = await memberWith(status);
      const post = await createPost(t, s.creator, { community_id: s.communityId, tier_min_id: s.tierId, content: 'The members-only training plan for this block, week by week, with every set and rep.' });
      expect(await lockedFor(t, s.reader, s.communityId, post.id), status).toBe(status !== 'past_due');
    }
  });

  it('may check out again in a community where the only subscription is incomplete, but not where one is past_due', async () => {
    for (const status of ['incomplete', 'past_due'] as const) {
      const s = await memberWith(status);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/member/checkout-sessions', headers: s.reader.headers, payload: { tier_id: s.tierId } });
      expect(res.statusCode, `${status}: ${res.body}`).toBe(status === 'past_due' ? 409 : 201);
    }
  });
});
