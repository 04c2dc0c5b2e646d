import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, createMember, json, type TestApp } from '../../../test/helpers.js';
import { openCheckout, pay } from '../../../test/billing-kit.js';
import { addMember, communityWithTiers, idsOf, listMembers, mirrorSubscription } from '../../../test/members-kit.js';

const DAY = 86_400_000;
let clock = new Date('2026-06-15T12:00:00Z');
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ webhooks: true, now: () => clock });
});
afterAll(async () => t.close());

describe('the member list', () => {
  it('shows a member who paid through hosted checkout, with the spec fields only', async () => {
    clock = new Date();
    const creator = await createCreator(t);
    const { communityId, tiers } = await communityWithTiers(t, creator, ['Pro']);
    const member = await createMember(t, { name: 'João Conceição' });
    const session = json(await openCheckout(t, member, tiers[0]!.id)).data;
    expect((await pay(t, session.processor_session_id)).status).toBe(200);

    const page = await listMembers(t, creator);
    expect(page.pagination).toEqual({ page: 1, limit: 20, total: 1, pages: 1, total_is_estimate: false });
    const [m] = page.data;
    expect(Object.keys(m!).sort()).toEqual(['avatar_url', 'email', 'engagement', 'id', 'name', 'subscriptions']);
    expect(m).toMatchObject({ id: member.id, name: 'João Conceição', email: member.email, avatar_url: null });
    expect(m!.subscriptions).toEqual([{ community_id: communityId, tier_id: tiers[0]!.id, tier_name: 'Pro', status: 'active', joined_at: expect.any(String) }]);
    expect(m!.engagement).toEqual({ last_active_at: null, workouts_completed_30d: 0, posts_count_30d: 0, streak_days: 0 });
  });

  it('finds members by name or e-mail ignoring case and accents', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await communityWithTiers(t, creator);
    const joao = await addMember(t, { name: 'João Conceição' });
    const maria = await addMember(t, { name: 'Maria Silva', email: `MARIA.${Date.now()}@Example.com` });
    for (const memberId of [joao, maria]) await mirrorSubscription(t, creator, { communityId, tierId: tiers[0]!.id, memberId }, { status: 'active' });

    expect(idsOf(await listMembers(t, creator, '?q=joao'))).toEqual([joao]);
    expect(idsOf(await listMembers(t, creator, '?q=CONCEICAO'))).toEqual([joao]);
    expect(idsOf(await listMembers(t, creator, '?q=SILVA'))).toEqual([maria]);
    expect(idsOf(await listMembers(t, creator, '?q=maria.'))).toEqual([maria]);
    expect(idsOf(await listMembers(t, creator, `?q=${encodeURIComponent('%')}`))).toEqual([]);
  });

  it('says a member is at risk after 14 quiet days, counted from joining when they never logged', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const creator = await createCreator(t);
    const { communityId, tiers } = await communityWithTiers(t, creator);
    const memberId = await addMember(t);
    await mirrorSubscription(t, creator, { communityId, tierId: tiers[0]!.id, memberId }, { status: 'active', createdAt: new Date(clock.getTime() - 10 * DAY) });
    expect(idsOf(await listMembers(t, creator, '?status=active'))).toEqual([memberId]);
    clock = new Date(clock.getTime() + 5 * DAY);
    expect(idsOf(await listMembers(t, creator, '?status=active'))).toEqual([]);
    expect(idsOf(await listMembers(t, creator, '?status=at_risk'))).toEqual([memberId]);
  });
});
