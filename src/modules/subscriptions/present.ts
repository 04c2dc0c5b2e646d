import { iso, isoOrNull } from '../../db/tx.js';
import type { SubscriptionRow } from './subscriptions.repo.js';

/** A subscription as the creator API answers it (and as the subscription events carry it). */
export const presentSubscription = (s: SubscriptionRow) => ({
  id: s.id,
  community_id: s.community_id,
  tier_id: s.tier_id,
  member_id: s.member_id,
  status: s.status,
  price_cents: Number(s.price_cents),
  billing_period: s.billing_period,
  current_period_start: isoOrNull(s.current_period_start),
  current_period_end: isoOrNull(s.current_period_end),
  cancel_at_period_end: s.cancel_at_period_end,
  canceled_at: isoOrNull(s.canceled_at),
  ended_at: isoOrNull(s.ended_at),
  trial_end: isoOrNull(s.trial_end),
  cancellation_reason: s.cancellation_reason,
  created_at: iso(s.created_at),
  scheduled_change: s.scheduled_tier_id && s.scheduled_change_at ? { tier_id: s.scheduled_tier_id, effective_at: iso(s.scheduled_change_at) } : null,
  processor_subscription_id: s.processor_subscription_id ?? '',
});

export type Subscription = ReturnType<typeof presentSubscription>;

export interface RefundRow {
  id: string;
  subscription_id: string;
  amount_cents: number | string;
  currency: string;
  status: string;
  processor_refund_id: string;
  created_at: Date | string;
}

/** A refund as the creator API answers it (refund.created carries the same fields, its id as refund_id). */
export const presentRefund = (r: RefundRow) => ({
  id: r.id,
  subscription_id: r.subscription_id,
  amount_cents: Number(r.amount_cents),
  currency: r.currency,
  status: r.status,
  processor_refund_id: r.processor_refund_id,
  created_at: iso(r.created_at),
});
