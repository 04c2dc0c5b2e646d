import { Type, type Static } from '@sinclair/typebox';
import { Currency, Int64, PaginationQuery, ProcessorId, Timestamp, Uuid } from '../../http/schemas.js';

const Status = Type.Union([Type.Literal('pending'), Type.Literal('in_transit'), Type.Literal('paid'), Type.Literal('failed'), Type.Literal('canceled')]);

export const Payout = Type.Object(
  {
    id: Uuid,
    amount_cents: Int64(),
    currency: Currency,
    status: Type.Union(Status.anyOf, {
      description: '`pending` (waiting at the processor) → `in_transit` (sent to the bank) → `paid`; `failed` when processing fails (the amount returns to the available balance); `canceled` if canceled before it was sent.',
    }),
    method: Type.Union([Type.Literal('automatic'), Type.Literal('manual')], { description: '`automatic` from the payout schedule; `manual` requested through this API.' }),
    arrival_date: Type.Union([Timestamp, Type.Null()], { description: 'When the bank should have the money (processor estimate).' }),
    // The processor's own message, kept whole: Stripe states no length for it (.spectral.yaml).
    failure_reason: Type.Union([Type.String(), Type.Null()], { description: "The processor's explanation of a failed payout." }),
    processor_payout_id: ProcessorId(),
    created_at: Timestamp,
  },
  { $id: 'Payout', title: 'Payout', description: 'A payout mirrored from the processor, the source of truth for payouts.' },
);

export const Balance = Type.Object(
  {
    currency: Currency,
    available_cents: Int64({ description: 'Available to pay out now (read from the processor).' }),
    pending_cents: Int64({ description: 'Charged, not yet available: funds become available 7 days after each charge (read from the processor).' }),
    this_month_received_cents: Int64({ description: 'Creator net of charges minus refunded net, this calendar month (UTC).' }),
    all_time_cents: Int64({ description: 'Creator net of all charges minus refunded net.' }),
    next_auto_payout_at: Type.Union([Timestamp, Type.Null()], { description: 'Next automatic payout under the schedule; null when the schedule is manual.' }),
    payout_schedule: Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly'), Type.Literal('manual')], {
      description: "The processor account's schedule, changed in the creator's processor dashboard (not through this API); learned from `account.updated`.",
    }),
  },
  { $id: 'Balance', title: 'Balance' },
);

export const ListPayoutsQuery = Type.Object({ ...PaginationQuery, status: Type.Optional(Status) }, { additionalProperties: false });
export type ListPayoutsQuery = Static<typeof ListPayoutsQuery>;

export const ManualPayoutBody = Type.Object(
  { amount_cents: Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Amount to pay out, in cents: at least the minimum (default 100) and at most the available balance.' }) },
  { additionalProperties: false },
);
export type ManualPayoutBody = Static<typeof ManualPayoutBody>;
