import { Type } from '@sinclair/typebox';
import { Currency, Int64, ProcessorId, Timestamp, Uuid } from '../../../http/schemas.js';
import { Payout } from '../../payouts/payouts.schemas.js';
import { ACCOUNT_STATUSES } from '../../account/status.js';
import { Subscription } from '../../subscriptions/subscriptions.schemas.js';
import { defineEvent, EventData } from './define.js';

/**
 * Billing: what the processor mirror learns (subscriptions, payments, refunds, payouts, the
 * account). Each is written in the transaction that changes the mirror's row, so a re-read
 * that finds nothing new sends nothing, whichever path (a processor webhook, reconciliation,
 * an API call's answer) brought it.
 */

// The subscription's fields as GET /api/v1/subscriptions/{id} shows them (no $id: inlined per event).
const subscriptionFields = Subscription.properties;
const PreviousAttributes = Type.Partial(Type.Object(subscriptionFields, { additionalProperties: false }), {
  description: 'Only the fields this change changed, each with the value it had before. Empty for `subscription.created`.',
});
const SubscriptionData = (title: string) => EventData(title, { ...subscriptionFields, previous_attributes: PreviousAttributes });

export const subscriptionCreated = defineEvent(
  'subscription.created',
  'A member’s subscription to one of your tiers appeared in Tribes for the first time (usually a completed checkout; it may still be `incomplete` or `trialing`). `data` is the subscription as the API shows it.',
  SubscriptionData('SubscriptionCreatedData'),
);

export const subscriptionUpdated = defineEvent(
  'subscription.updated',
  'A subscription changed in a way the API shows: status, tier or price, period, cancel at period end, cancellation or end. `data` is the subscription after the change; `previous_attributes` holds what changed, with its old values. Sent once per change; a re-read that finds nothing new sends nothing. A change to `canceled` or `past_due` also sends `subscription.canceled` or `subscription.past_due`.',
  SubscriptionData('SubscriptionUpdatedData'),
);

export const subscriptionCanceled = defineEvent(
  'subscription.canceled',
  'A subscription ended: its status became `canceled` (canceled now, at the end of a period set to cancel, or after the last failed payment retry). Sent with the `subscription.updated` of the same change.',
  SubscriptionData('SubscriptionCanceledData'),
);

export const subscriptionPastDue = defineEvent(
  'subscription.past_due',
  'A renewal payment failed and the processor is retrying it: the subscription’s status became `past_due`. The member keeps access meanwhile. Sent with the `subscription.updated` of the same change.',
  SubscriptionData('SubscriptionPastDueData'),
);

const MemberData = (title: string, at: string) =>
  EventData(title, {
    member_id: Uuid,
    community_id: Uuid,
    subscription_id: Uuid,
    tier_id: Uuid,
    status: Type.Union(Subscription.properties.status.anyOf, { description: 'That subscription’s status now.' }),
    at: Type.String({ format: 'date-time', maxLength: 64, description: at }),
  });

export const memberJoined = defineEvent(
  'member.joined',
  'A member got access to one of your communities: they had no live subscription (trialing, active or past_due) in it and now have one. Sent again if they leave and come back.',
  MemberData('MemberJoinedData', 'When Tribes learned of it.'),
);

export const memberLeft = defineEvent(
  'member.left',
  'A member lost access to one of your communities: their last live subscription in it stopped being live (canceled, ended, unpaid, …). A subscription set to cancel at period end is still live until the period ends.',
  MemberData('MemberLeftData', 'When Tribes learned of it.'),
);

export const paymentSucceeded = defineEvent(
  'payment.succeeded',
  'A member paid an invoice of a subscription (the first charge or a renewal). Sent once per paid invoice. Amounts are integer cents of `currency`.',
  EventData('PaymentSucceededData', {
    payment_id: Uuid,
    subscription_id: Uuid,
    member_id: Uuid,
    tier_id: Type.Union([Uuid, Type.Null()], { description: 'The tier the payment paid for; null if it maps to none of yours.' }),
    gross_cents: Int64({ description: 'What the member paid.' }),
    fee_cents: Type.Union([Int64(), Type.Null()], { description: 'The platform fee taken from it, when the processor states it; null otherwise.' }),
    net_cents: Type.Union([Int64(), Type.Null()], { description: 'Gross minus the fee: what reaches your balance (before processing costs); null when the fee is not known.' }),
    currency: Currency,
    processor_invoice_id: ProcessorId(),
    paid_at: Timestamp,
  }),
);

export const paymentFailed = defineEvent(
  'payment.failed',
  'An attempt to charge a member for a subscription’s invoice failed (a declined card, say). Sent once per failed attempt; the processor retries a renewal (see `next_payment_attempt`) and the subscription usually becomes `past_due` meanwhile.',
  EventData('PaymentFailedData', {
    subscription_id: Uuid,
    member_id: Uuid,
    tier_id: Uuid,
    amount_due_cents: Int64({ description: 'What the invoice asks for, in cents of `currency`.' }),
    currency: Currency,
    processor_invoice_id: ProcessorId(),
    attempt_count: Int64({ description: 'Attempts to pay the invoice so far, this one included.' }),
    next_payment_attempt: Type.Union([Timestamp, Type.Null()], { description: 'When the processor tries again; null when it will not.' }),
  }),
);

export const refundCreated = defineEvent(
  'refund.created',
  'A payment was refunded, in part or whole, through this API or in the processor’s dashboard. Sent once per refund, whichever way Tribes learned of it first.',
  EventData('RefundCreatedData', {
    refund_id: Uuid,
    subscription_id: Uuid,
    amount_cents: Int64({ description: 'The amount refunded, in cents of `currency`.' }),
    currency: Currency,
    status: Type.String({ maxLength: 32, description: 'The processor’s refund status (`pending`, `succeeded`, `failed`, …).' }),
    processor_refund_id: ProcessorId(),
    created_at: Timestamp,
  }),
);

const PayoutData = (title: string) => EventData(title, { ...Payout.properties });

export const payoutPaid = defineEvent(
  'payout.paid',
  'A payout reached your bank (its status became `paid`). `data` is the payout as GET /api/v1/payouts/{id} shows it.',
  PayoutData('PayoutPaidData'),
);

export const payoutFailed = defineEvent(
  'payout.failed',
  'A payout failed (its status became `failed`); the amount returns to your available balance. `failure_reason` says why.',
  PayoutData('PayoutFailedData'),
);

const AccountStatus = Type.Union(
  ACCOUNT_STATUSES.map((s) => Type.Literal(s)),
  { description: 'The onboarding status, as GET /api/v1/account shows it.' },
);
const AccountFields = {
  status: AccountStatus,
  charges_enabled: Type.Boolean({ description: 'Members can pay.' }),
  payouts_enabled: Type.Boolean({ description: 'Payouts run.' }),
  details_submitted: Type.Boolean({ description: 'Onboarding was completed once.' }),
  currently_due: Type.Array(Type.String({ maxLength: 255 }), { maxItems: 500, description: 'What the processor needs from you now.' }),
  past_due: Type.Array(Type.String({ maxLength: 255 }), { maxItems: 500, description: 'What it needed and is overdue.' }),
  current_deadline: Type.Union([Timestamp, Type.Null()], { description: 'When what is currently due must be provided by.' }),
  disabled_reason: Type.Union([Type.String({ maxLength: 255 }), Type.Null()], { description: 'Why charges or payouts are disabled, as the processor says.' }),
};

export const accountUpdated = defineEvent(
  'account.updated',
  'Your payment account changed at the processor: onboarding status, charges or payouts enabled, or what it asks of you. `previous_attributes` holds what changed, with its old values.',
  EventData('AccountUpdatedData', {
    ...AccountFields,
    previous_attributes: Type.Partial(Type.Object(AccountFields, { additionalProperties: false }), { description: 'Only the fields that changed, each with its value before.' }),
  }),
);
