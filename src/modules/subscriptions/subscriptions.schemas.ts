import { Type, type Static } from '@sinclair/typebox';
import { STATUS_MEANINGS, SUBSCRIPTION_STATUSES } from './status.js';
import { Currency, Int64, PaginationQuery, ProcessorId, Timestamp, Uuid } from '../../http/schemas.js';
import { TIER_NAME_MAX } from '../tiers/tiers.schemas.js';

/** The cancel call's note, kept as sent. */
const REASON_MAX = 500;

export const Status = Type.Union(SUBSCRIPTION_STATUSES.map((s) => Type.Literal(s)));
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const ScheduledChange = Type.Union(
  [
    Type.Object({
      tier_id: Uuid,
      tier_name: Type.Optional(Type.String({ maxLength: TIER_NAME_MAX })),
      effective_at: Timestamp,
    }),
    Type.Null(),
  ],
  {
    description:
      'A tier change waiting for the end of the period (a downgrade): the tier the subscription moves to and when, as the processor’s schedule says. Until then the subscription keeps its tier and price. Null when none is scheduled.',
  },
);

export const Subscription = Type.Object(
  {
    id: Uuid,
    community_id: Uuid,
    tier_id: Uuid,
    member_id: Uuid,
    status: Type.Union(Status.anyOf, {
      description: STATUS_MEANINGS,
    }),
    price_cents: Int64({ description: 'The price this subscription is billed at (it keeps its price when the tier changes price).' }),
    billing_period: Type.Union([Type.Literal('monthly'), Type.Literal('quarterly'), Type.Literal('yearly')]),
    current_period_start: NullableTimestamp,
    current_period_end: NullableTimestamp,
    cancel_at_period_end: Type.Boolean(),
    canceled_at: NullableTimestamp,
    ended_at: NullableTimestamp,
    trial_end: NullableTimestamp,
    cancellation_reason: Type.Union([Type.String({ maxLength: REASON_MAX }), Type.Null()], { description: "The creator's internal note from the cancel call; never shown to the member." }),
    created_at: Timestamp,
    scheduled_change: ScheduledChange,
    processor_subscription_id: ProcessorId(),
  },
  { $id: 'Subscription', title: 'Subscription', description: 'A mirror of the processor subscription; times are the processor’s own.' },
);

export const ListSubscriptionsQuery = Type.Object(
  {
    ...PaginationQuery,
    community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })),
    tier_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })),
    member_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
export type ListSubscriptionsQuery = Static<typeof ListSubscriptionsQuery>;

export const CancelBody = Type.Object(
  {
    immediate: Type.Optional(
      Type.Boolean({ description: 'true: canceled now, no pro-rata refund. false or omitted: canceled at the end of the current period; access continues until then.' }),
    ),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: REASON_MAX, description: 'Internal note, kept on the subscription; never sent to the member.' })),
  },
  { additionalProperties: false },
);
export type CancelBody = Static<typeof CancelBody>;

export const RefundBody = Type.Object(
  {
    amount_cents: Type.Optional(
      Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Partial refund amount; default the whole remaining amount of the last payment.' }),
    ),
  },
  { additionalProperties: false },
);
export type RefundBody = Static<typeof RefundBody>;

/** The processor's refund status, kept as it said: one of Stripe's lower-case snake_case values. */
export const RefundStatus = Type.String({
  maxLength: 32,
  pattern: '^[a-z_]+$',
  description: 'The processor refund status as it reports it (Stripe: `pending`, `requires_action`, `succeeded`, `failed`, `canceled`).',
});

export const Refund = Type.Object(
  {
    id: Uuid,
    subscription_id: Uuid,
    amount_cents: Int64(),
    currency: Currency,
    status: RefundStatus,
    processor_refund_id: ProcessorId(),
    created_at: Timestamp,
  },
  { $id: 'Refund', title: 'Refund', description: 'The platform fee is reversed in proportion to the refunded amount.' },
);
