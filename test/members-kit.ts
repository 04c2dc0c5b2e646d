import { expect } from 'vitest';
import { newId } from '../src/db/ids.js';
import type { SubscriptionStatus } from '../src/db/types.js';
import { createMembershipRepo } from '../src/modules/memberships/membership.repo.js';
import { createCommunity, createTier, json, uniq, type TestApp, type TestCreator } from './helpers.js';

/**
 * Member-directory fixtures. Subscriptions here are written the way the mirror writes them
 * (subscriptions/sync.ts): the row, then the directory refresh in the same transaction; the
 * processor is not involved, so tests can place joins and statuses anywhere in time.
 */
export async function addMember(t: TestApp, input: { name?: string; email?: string; avatarUrl?: string } = {}) {
  const id = newId();
  await t.database.db
    .insertInto('members')
    .values({ id, name: input.name ?? 'Maria Silva', email: input.email ?? `member-${uniq()}@example.com`, avatar_url: input.avatarUrl ?? null })
    .execute();
  return id;
}

export interface SubscriptionInput {
  status: SubscriptionStatus;
  createdAt?: Date;
  cancelAtPeriodEnd?: boolean;
}

/** Writes a subscription (or, given `id`, changes it) as the mirror would, directory included. */
export async function mirrorSubscription(
  t: TestApp,
  creator: TestCreator,
  where: { communityId: string; tierId: string; memberId: string; id?: string },
  input: SubscriptionInput,
): Promise<string> {
  const id = where.id ?? newId();
  await t.database.db.transaction().execute(async (trx) => {
    const values = { status: input.status, cancel_at_period_end: input.cancelAtPeriodEnd ?? false, tier_id: where.tierId };
    if (where.id) {
      await trx.updateTable('subscriptions').set(values).where('id', '=', id).execute();
    } else {
      await trx
        .insertInto('subscriptions')
        .values({
          id,
          creator_id: creator.id,
          community_id: where.communityId,
          member_id: where.memberId,
          price_cents: 4990,
          billing_period: 'monthly',
          processor_subscription_id: `sub_test_${uniq()}`,
          created_at: input.createdAt ?? new Date(),
          ...values,
        })
        .execute();
    }
    const repo = createMembershipRepo();
    await repo.recordChange(creator.id, id, trx);
    await repo.refresh(creator.id, where.memberId, where.communityId, trx);
  });
  return id;
}

/** A community with `tiers` tiers (names Basic, Pro, Elite, ...), made through the API. */
export async function communityWithTiers(t: TestApp, creator: TestCreator, names: string[] = ['Basic', 'Pro']) {
  const community = await createCommunity(t, creator);
  const tiers: Array<{ id: string; name: string }> = [];
  for (const [i, name] of names.entries()) {
    const tier = await createTier(t, creator, community.id, { name, price_cents: 1000 * (i + 1) });
    tiers.push({ id: tier.id, name });
  }
  return { communityId: community.id, tiers };
}

export async function listMembers(t: TestApp, creator: TestCreator, query = '') {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/members${query}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { data: Array<Record<string, any>>; pagination: Record<string, any> };
}

export const idsOf = (page: { data: Array<Record<string, any>> }) => page.data.map((m) => m.id as string);
