import type { Executor } from '../../db/tx.js';
import { memberSubscriptionsOf } from '../member-billing/member-view.js';

/**
 * What a member's tier change reads. Keyed by the member (a member is one person across
 * creators); every creator-scoped row is matched by the subscription's creator too.
 */
export function createMemberSubscriptionsRepo(db: Executor) {
  return {
    /** The member's own subscription with what decides a tier change; undefined for anyone else's. */
    async forTierChange(memberId: string, id: string) {
      return db
        .selectFrom('subscriptions as s')
        .innerJoin('communities as c', 'c.id', 's.community_id')
        .innerJoin('creators as cr', 'cr.id', 's.creator_id')
        .select([
          's.id', 's.creator_id', 's.community_id', 's.tier_id', 's.status', 's.cancel_at_period_end', 's.processor_subscription_id', 's.scheduled_tier_id',
          'c.status as community_status', 'cr.processor_account_id',
        ])
        .where('s.member_id', '=', memberId)
        .where('s.id', '=', id)
        .executeTakeFirst();
    },

    /** Every tier of the community (the tier order ranks them all, inactive ones included), with its current price. */
    async communityTiers(creatorId: string, communityId: string) {
      return db
        .selectFrom('tiers')
        .select(['id', 'price_cents', 'billing_period', 'level', 'created_at', 'is_active', 'processor_price_id'])
        .where('creator_id', '=', creatorId)
        .where('community_id', '=', communityId)
        .execute();
    },

    /** The subscription as its member sees it after the change (member-billing/member-view.ts). */
    async view(memberId: string, id: string, trx: Executor = db) {
      return memberSubscriptionsOf(trx, memberId).where('s.id', '=', id).executeTakeFirst();
    },
  };
}

export type MemberSubscriptionsRepo = ReturnType<typeof createMemberSubscriptionsRepo>;
