import { iso, isoOrNull, type Executor } from '../../db/tx.js';

/**
 * A member's subscriptions as the member sees them — no creator's note, no processor ids —
 * with the tier change waiting for the period's end. One query shape and one presenter for
 * every answer that shows one: the member's list, cancel and resume, and change-tier.
 */
export function memberSubscriptionsOf(db: Executor, memberId: string) {
  return db
    .selectFrom('subscriptions as s')
    .innerJoin('tiers as t', 't.id', 's.tier_id')
    .innerJoin('communities as c', 'c.id', 's.community_id')
    .leftJoin('tiers as st', (j) => j.onRef('st.id', '=', 's.scheduled_tier_id').onRef('st.creator_id', '=', 's.creator_id'))
    .select([
      's.id', 's.community_id', 'c.name as community_name', 's.tier_id', 't.name as tier_name', 's.status', 's.price_cents', 's.billing_period',
      's.current_period_end', 's.cancel_at_period_end', 's.trial_end', 's.created_at', 's.scheduled_tier_id', 'st.name as scheduled_tier_name',
      's.scheduled_change_at',
    ])
    .where('s.member_id', '=', memberId);
}

type Row = Awaited<ReturnType<ReturnType<typeof memberSubscriptionsOf>['execute']>>[number];

export const presentMemberSubscription = (r: Row) => ({
  id: r.id,
  community_id: r.community_id,
  community_name: r.community_name,
  tier_id: r.tier_id,
  tier_name: r.tier_name,
  status: r.status,
  price_cents: Number(r.price_cents),
  billing_period: r.billing_period,
  current_period_end: isoOrNull(r.current_period_end),
  cancel_at_period_end: r.cancel_at_period_end,
  trial_end: isoOrNull(r.trial_end),
  created_at: iso(r.created_at),
  scheduled_change:
    r.scheduled_tier_id && r.scheduled_change_at
      ? { tier_id: r.scheduled_tier_id, ...(r.scheduled_tier_name ? { tier_name: r.scheduled_tier_name } : {}), effective_at: iso(r.scheduled_change_at) }
      : null,
});

export type MemberSubscriptionView = ReturnType<typeof presentMemberSubscription>;
