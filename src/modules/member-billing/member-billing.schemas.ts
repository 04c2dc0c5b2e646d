import { Type, type Static } from '@sinclair/typebox';
import { Currency, Int64, Timestamp, Uuid } from '../../http/schemas.js';
import { COMMUNITY_NAME_MAX } from '../communities/communities.schemas.js';
import { RefundStatus, ScheduledChange } from '../subscriptions/subscriptions.schemas.js';
import { STATUS_MEANINGS, SUBSCRIPTION_STATUSES } from '../subscriptions/status.js';
import { TIER_NAME_MAX } from '../tiers/tiers.schemas.js';

/** A subscription as its member sees it: no creator's note, no processor ids. */
export const MemberSubscription = Type.Object({
  id: Uuid,
  community_id: Uuid,
  community_name: Type.String({ maxLength: COMMUNITY_NAME_MAX }),
  tier_id: Uuid,
  tier_name: Type.String({ maxLength: TIER_NAME_MAX }),
  status: Type.String({ enum: [...SUBSCRIPTION_STATUSES], description: STATUS_MEANINGS }),
  price_cents: Int64(),
  billing_period: Type.String({ enum: ['monthly', 'quarterly', 'yearly'] }),
  current_period_end: Type.Union([Timestamp, Type.Null()]),
  cancel_at_period_end: Type.Boolean({ description: 'true: it ends at `current_period_end` and access lasts until then (the member, the creator or a paused community set it).' }),
  trial_end: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp,
  scheduled_change: ScheduledChange,
});

export const BillingPortalBody = Type.Object(
  { community_id: Uuid },
  { additionalProperties: false },
);
export type BillingPortalBody = Static<typeof BillingPortalBody>;

export const BillingPortalLink = Type.Object({
  url: Type.Union([Type.String({ format: 'uri', maxLength: 2048 }), Type.Null()], {
    description: "The processor's hosted billing portal for this member on the community's creator: send the member there at once (it expires within minutes). Null in a replayed answer: links are never stored.",
  }),
});
export type BillingPortalLink = Static<typeof BillingPortalLink>;

export const PaymentStatus = Type.Union([Type.Literal('paid'), Type.Literal('partially_refunded'), Type.Literal('refunded')], {
  description: '`refunded` when refunds (pending or succeeded) give back all of it, `partially_refunded` when some, else `paid`.',
});

export const MemberPayment = Type.Object({
  id: Uuid,
  subscription_id: Uuid,
  community_id: Uuid,
  community_name: Type.String({ maxLength: COMMUNITY_NAME_MAX }),
  tier_id: Uuid,
  tier_name: Type.String({
    maxLength: TIER_NAME_MAX,
    description: "The tier the payment paid for (an upgrade's prorated invoice: the new tier). Payments mirrored before this was kept (migration 0025) show the subscription's tier.",
  }),
  amount_cents: Int64({ description: 'What was charged (the paid invoice).' }),
  refunded_cents: Int64({ description: 'What refunds that have not failed or been canceled give back of it.' }),
  currency: Currency,
  status: PaymentStatus,
  paid_at: Timestamp,
  refunds: Type.Array(
    Type.Object({ amount_cents: Int64(), status: RefundStatus, created_at: Timestamp }),
    { maxItems: 100, description: 'Refunds of this payment, oldest first, as the processor reports them.' },
  ),
});
export type MemberPayment = Static<typeof MemberPayment>;
