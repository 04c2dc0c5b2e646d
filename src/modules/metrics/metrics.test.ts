import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/ids.js';
import { buildTestApp, createCommunity, createCreator, createTier, json, uniq, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { addMember, DAY_MS, mirrorSubscription, setLastActive, type SubscriptionInput } from '../../../test/members-kit.js';
import { createChallenge } from '../../../test/challenges-kit.js';

/**
 * Creator metrics computed by hand: a timeline of members placed around a fixed clock, each
 * figure worked out in the comments next to it (DESIGN §7 definitions).
 */
const NOW = new Date('2026-06-15T12:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => NOW });
});
afterAll(async () => t.close());

const ago = (days: number) => new Date(NOW.getTime() - days * DAY_MS);
const get = async (creator: TestCreator, url: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
};

async function member(creator: TestCreator, tierId: string, communityId: string, input: SubscriptionInput) {
  const id = await addMember(t);
  const subscriptionId = await mirrorSubscription(t, creator, { communityId, tierId, memberId: id }, input);
  return { id, subscriptionId };
}

async function payment(creator: TestCreator, subscriptionId: string, amount: number, paidAt: Date) {
  await sql`insert into payments (id, creator_id, subscription_id, processor_invoice_id, processor_payment_intent_id, amount_cents, currency, paid_at)
    values (${newId()}, ${creator.id}, ${subscriptionId}, ${`in_${uniq()}`}, ${`pi_${uniq()}`}, ${amount}, 'brl', ${paidAt})`.execute(t.database.db);
}

async function refund(creator: TestCreator, subscriptionId: string, amount: number, at: Date, status = 'succeeded') {
  await sql`insert into refunds (id, creator_id, subscription_id, amount_cents, currency, status, processor_refund_id, created_at)
    values (${newId()}, ${creator.id}, ${subscriptionId}, ${amount}, 'brl', ${status}, ${`re_${uniq()}`}, ${at})`.execute(t.database.db);
}

/** The scenario of the header: community A (monthly, quarterly, yearly tiers) and B. */
async function timeline() {
  const creator = await createCreator(t);
  const a = await createCommunity(t, creator);
  const b = await createCommunity(t, creator);
  const basic = (await createTier(t, creator, a.id, { name: 'Basic', price_cents: 1000, billing_period: 'monthly' })).id;
  const pro = (await createTier(t, creator, a.id, { name: 'Pro', price_cents: 2500, billing_period: 'quarterly' })).id;
  const elite = (await createTier(t, creator, a.id, { name: 'Elite', price_cents: 10001, billing_period: 'yearly' })).id;
  const club = (await createTier(t, creator, b.id, { name: 'Club', price_cents: 2000, billing_period: 'monthly' })).id;
  const inA = (tierId: string, input: SubscriptionInput) => member(creator, tierId, a.id, input);
  // m1 pays 1,000 a month since 60 days.
  const m1 = await inA(basic, { status: 'active', createdAt: ago(60), priceCents: 1000 });
  // m2 pays 2,500 a quarter (833.33 → 833), set to cancel at period end: still paying.
  const m2 = await inA(pro, { status: 'active', cancelAtPeriodEnd: true, createdAt: ago(45), priceCents: 2500, billingPeriod: 'quarterly' });
  // m3 is past due on 10,001 a year (833.42 → 833): still in MRR.
  const m3 = await inA(elite, { status: 'past_due', createdAt: ago(200), priceCents: 10001, billingPeriod: 'yearly' });
  // m4 trials since 5 days: new, not MRR.
  const m4 = await inA(basic, { status: 'trialing', createdAt: ago(5), priceCents: 1000 });
  // m5 ended 10 days ago, live at the window's start: lost.
  const m5 = await inA(basic, { status: 'canceled', createdAt: ago(90), endedAt: ago(10), priceCents: 1000 });
  // m6 ended exactly 30 days ago: outside the window, neither lost nor live at its start.
  await inA(basic, { status: 'canceled', createdAt: ago(120), endedAt: ago(30), priceCents: 1000 });
  // m7 joined B 3 days ago at 2,000 a month: new and paying (creator-wide only).
  const m7 = await member(creator, club, b.id, { status: 'active', createdAt: ago(3), priceCents: 2000 });
  // m8 left Basic 20 days ago but moved to Pro at 3,000 a quarter (1,000): not lost, not new.
  const m8 = await inA(basic, { status: 'canceled', createdAt: ago(100), endedAt: ago(20), priceCents: 1000 });
  await mirrorSubscription(t, creator, { communityId: a.id, tierId: pro, memberId: m8.id }, { status: 'active', createdAt: ago(20), priceCents: 3000, billingPeriod: 'quarterly' });
  // Activity: m1 yesterday and m4 29 days ago count; m2 exactly 30 days ago does not; m5 is not live.
  await setLastActive(t, creator.id, m1.id, ago(1));
  await setLastActive(t, creator.id, m4.id, ago(29));
  await setLastActive(t, creator.id, m2.id, ago(30));
  await setLastActive(t, creator.id, m5.id, ago(1));
  // Money in June: 1,000 and 2,000 charged, 500 refunded (a failed refund of 300 aside); May's charge aside.
  await payment(creator, m1.subscriptionId, 1000, new Date('2026-06-02T08:00:00Z'));
  await payment(creator, m7.subscriptionId, 2000, new Date('2026-06-12T08:00:00Z'));
  await payment(creator, m3.subscriptionId, 10001, new Date('2026-05-31T23:59:59Z'));
  await refund(creator, m1.subscriptionId, 500, new Date('2026-06-10T08:00:00Z'));
  await refund(creator, m1.subscriptionId, 300, new Date('2026-06-11T08:00:00Z'), 'failed');
  return { creator, a, b, tiers: { basic, pro, elite, club } };
}

describe('creator metrics', () => {
  it('adds up a monthly, quarterly and yearly mix, trials, past due, cancel at period end, a refund and the 30-day edge, by hand', async () => {
    const { creator, tiers } = await timeline();
    const m = await get(creator, '/creator-metrics');
    expect(m).toEqual({
      communities_count: 2,
      active_subscribers: 5, // m1, m2, m3, m7, m8
      trialing: 1, // m4
      mrr_cents: 1000 + 833 + 833 + 2000 + 1000,
      this_month_revenue_cents: 1000 + 2000 - 500,
      platform_fee_pct: 10,
      churn_rate_30d: 0.1429, // m5 of (m1, m2, m3, m5, m8 live 30 days ago + m4, m7 new) = 1/7
      engagement_rate_30d: 0.3333, // m1, m4 of the 6 live
      tier_mix: [
        { tier_id: tiers.club, name: 'Club', members: 1, mrr_cents: 2000 },
        { tier_id: tiers.pro, name: 'Pro', members: 2, mrr_cents: 833 + 1000 },
        { tier_id: tiers.basic, name: 'Basic', members: 1, mrr_cents: 1000 },
        { tier_id: tiers.elite, name: 'Elite', members: 1, mrr_cents: 833 },
      ],
      growth_30d: { new_subscribers: 2, lost_subscribers: 1, net_growth: 1 },
    });
    expect(m.tier_mix.reduce((n: number, x: { members: number }) => n + x.members, 0)).toBe(m.active_subscribers);
    expect(m.tier_mix.reduce((n: number, x: { mrr_cents: number }) => n + x.mrr_cents, 0)).toBe(m.mrr_cents);
  });

  it("counts one community's members, money and feed, and its top running challenges", async () => {
    const { creator, a, tiers } = await timeline();
    const post = (json(await t.app.inject({ method: 'POST', url: '/api/v1/posts', headers: creator.headers, payload: { community_id: a.id, content: 'Week 3' } })).data as { id: string }).id;
    const [reader] = await t.database.db.selectFrom('subscriptions').select('member_id').where('community_id', '=', a.id).where('status', '=', 'active').execute();
    await sql`insert into post_kudos (post_id, member_id, creator_id, created_at) values (${post}, ${reader!.member_id}, ${creator.id}, ${ago(1)})`.execute(t.database.db);
    await sql`insert into post_views (post_id, member_id, day, creator_id) values (${post}, ${reader!.member_id}, ${'2026-06-14'}, ${creator.id}), (${post}, ${reader!.member_id}, ${'2026-05-16'}, ${creator.id})`.execute(
      t.database.db,
    );
    const busy = await createChallenge(t, creator, { community_id: a.id, starts_at: ago(2), name: 'Busy' });
    await createChallenge(t, creator, { community_id: a.id, starts_at: ago(1), name: 'Quiet' });
    await createChallenge(t, creator, { community_id: a.id, starts_at: ago(-3), name: 'Later' });
    await t.database.db.updateTable('challenges').set({ participants_count: 7 }).where('id', '=', busy.id).execute();
    const m = await get(creator, `/creator-metrics/${a.id}`);
    expect(m).toMatchObject({
      community_id: a.id,
      communities_count: 1,
      active_subscribers: 4, // m1, m2, m3, m8
      trialing: 1,
      mrr_cents: 1000 + 833 + 833 + 1000,
      this_month_revenue_cents: 1000 - 500,
      churn_rate_30d: 0.1667, // m5 of 5 live 30 days ago + m4 new
      engagement_rate_30d: 0.4, // m1, m4 of 5 live
      growth_30d: { new_subscribers: 1, lost_subscribers: 1, net_growth: 0 },
      // One view on 14 June counts; the one on 16 May (30 UTC days back) does not.
      engagement_30d: { posts: 1, comments: 0, kudos: 1, views: 1 },
    });
    expect(m.tier_mix.map((x: { tier_id: string }) => x.tier_id)).toEqual([tiers.pro, tiers.basic, tiers.elite]);
    expect(m.top_challenges.map((c: { name: string }) => c.name)).toEqual(['Busy', 'Quiet']);
  });

  it('counts members coming back as new, so churn stays at most 1 and net growth is the change in live members', async () => {
    const creator = await createCreator(t);
    const a = await createCommunity(t, creator);
    const tier = (await createTier(t, creator, a.id, { price_cents: 1000 })).id;
    const steady = await member(creator, tier, a.id, { status: 'active', createdAt: ago(90), priceCents: 1000 });
    for (let i = 0; i < 2; i++) {
      // Left 50 days ago, came back 20 days ago, left again 5 days ago.
      const back = await member(creator, tier, a.id, { status: 'canceled', createdAt: ago(80), endedAt: ago(50), priceCents: 1000 });
      await mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: back.id }, { status: 'canceled', createdAt: ago(20), endedAt: ago(5), priceCents: 1000 });
    }
    const m = await get(creator, '/creator-metrics');
    // Live 30 days ago: steady (1); became live in the window: the two returners (2); lost: the two.
    expect(m.churn_rate_30d).toBe(0.6667);
    expect(m.growth_30d).toEqual({ new_subscribers: 2, lost_subscribers: 2, net_growth: 0 });
    expect(m.active_subscribers).toBe(1);
    expect(steady.id).toBeTruthy();
  });

  it('answers zeros for a creator with nothing yet, and 404 for a community of another creator', async () => {
    const { a } = await timeline();
    const other = await createCreator(t);
    expect(await get(other, '/creator-metrics')).toEqual({
      communities_count: 0,
      active_subscribers: 0,
      trialing: 0,
      mrr_cents: 0,
      this_month_revenue_cents: 0,
      platform_fee_pct: 10,
      churn_rate_30d: 0,
      engagement_rate_30d: 0,
      tier_mix: [],
      growth_30d: { new_subscribers: 0, lost_subscribers: 0, net_growth: 0 },
    });
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/creator-metrics/${a.id}`, headers: other.headers });
    expect(res.statusCode).toBe(404);
  });
});

describe('retention cohorts', () => {
  const at = (iso: string) => new Date(iso);

  async function cohortTimeline() {
    const creator = await createCreator(t);
    const a = await createCommunity(t, creator);
    const tier = (await createTier(t, creator, a.id, { name: 'Basic', price_cents: 1000 })).id;
    const join = (input: SubscriptionInput) => member(creator, tier, a.id, input);
    // The March cohort: a stays; b leaves in April; c leaves in April and comes back in May; h joins in March's last second.
    await join({ status: 'active', createdAt: at('2026-03-10T00:00:00Z') });
    await join({ status: 'canceled', createdAt: at('2026-03-20T00:00:00Z'), endedAt: at('2026-04-15T00:00:00Z') });
    const c = await join({ status: 'canceled', createdAt: at('2026-03-05T00:00:00Z'), endedAt: at('2026-04-20T00:00:00Z') });
    await mirrorSubscription(t, creator, { communityId: a.id, tierId: tier, memberId: c.id }, { status: 'active', createdAt: at('2026-05-10T00:00:00Z') });
    await join({ status: 'active', createdAt: at('2026-03-31T23:59:59Z') });
    // The April cohort: d stays; e ends an hour before May's end; i joins at April's first instant.
    await join({ status: 'active', createdAt: at('2026-04-02T00:00:00Z') });
    await join({ status: 'canceled', createdAt: at('2026-04-28T00:00:00Z'), endedAt: at('2026-05-31T23:00:00Z') });
    await join({ status: 'active', createdAt: at('2026-04-01T00:00:00Z') });
    // June: f trials since the 3rd, j since Tuesday 9th (last ISO week). g joined in February: no cohort here.
    await join({ status: 'trialing', createdAt: at('2026-06-03T00:00:00Z') });
    await join({ status: 'active', createdAt: at('2026-06-09T00:00:00Z') });
    await join({ status: 'active', createdAt: at('2026-02-10T00:00:00Z') });
    return { creator, a };
  }

  it('groups members by their first month and counts who still holds a subscription at each month end, by hand', async () => {
    const { creator, a } = await cohortTimeline();
    const got = await get(creator, `/creator-metrics/cohorts?periods=4&community_id=${a.id}`);
    expect(got).toEqual({
      period: 'month',
      cohorts: [
        { cohort_start: '2026-03-01T00:00:00.000Z', size: 4, retention_pct: [100, 50, 75, 75] },
        { cohort_start: '2026-04-01T00:00:00.000Z', size: 3, retention_pct: [100, 66.7, 66.7] },
        { cohort_start: '2026-05-01T00:00:00.000Z', size: 0, retention_pct: [] },
        { cohort_start: '2026-06-01T00:00:00.000Z', size: 2, retention_pct: [100] },
      ],
    });
    expect(await get(creator, '/creator-metrics/cohorts?periods=4')).toEqual(got);
  });

  it('takes ISO weeks from Monday, six cohorts by default, and refuses periods outside 1 to 24 or another length', async () => {
    const { creator } = await cohortTimeline();
    const weeks = await get(creator, '/creator-metrics/cohorts?period=week&periods=2');
    expect(weeks.cohorts).toEqual([
      { cohort_start: '2026-06-08T00:00:00.000Z', size: 1, retention_pct: [100, 100] },
      { cohort_start: '2026-06-15T00:00:00.000Z', size: 0, retention_pct: [] },
    ]);
    expect((await get(creator, '/creator-metrics/cohorts')).cohorts).toHaveLength(6);
    for (const q of ['periods=0', 'periods=25', 'period=year', 'periods=two']) {
      expect((await t.app.inject({ method: 'GET', url: `/api/v1/creator-metrics/cohorts?${q}`, headers: creator.headers })).statusCode, q).toBe(400);
    }
    const other = await createCreator(t);
    const theirs = await createCommunity(t, other);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/creator-metrics/cohorts?community_id=${theirs.id}`, headers: creator.headers })).statusCode).toBe(404);
  });
});
