import { Type, type Static } from '@sinclair/typebox';
import { Currency, Int64, PaginationQuery, ProcessorId, Timestamp, Uuid } from '../../http/schemas.js';

const BillingPeriod = Type.Union([Type.Literal('monthly'), Type.Literal('quarterly'), Type.Literal('yearly')], {
  description: 'How often the member is charged: `monthly`, `quarterly` (every 3 months) or `yearly`.',
});
/** A tier's name: also the bound of every answer that names a tier (discovery, the paywall, metrics, members). */
export const TIER_NAME_MAX = 120;
const Name = Type.String({ minLength: 1, maxLength: TIER_NAME_MAX, pattern: '\\S', description: 'Name shown to members, 1 to 120 characters.' });
const PriceCents = Type.Integer({
  format: 'int32',
  minimum: 100,
  maximum: 99_999_999,
  description: 'Price per billing period in cents (minimum 100). Free tiers are not supported.',
});
const TrialDays = Type.Integer({ format: 'int32', minimum: 0, maximum: 730, description: 'Free trial days before the first charge (0 to 730).' });
export const Benefits = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
  maxItems: 20,
  description: 'Up to 20 benefits shown to members, each 1 to 200 characters.',
});
const Level = Type.Integer({
  format: 'int32',
  minimum: 0,
  maximum: 1000,
  description:
    'Optional explicit rank for the paywall and challenge minimums. Without levels, tiers of a community rank by monthly-normalised price, then creation time; once any tier of the community has a level, tiers rank by level alone (none = 0) and equal levels are equal.',
});

export const Tier = Type.Object(
  {
    id: Uuid,
    community_id: Uuid,
    name: Type.String({ maxLength: TIER_NAME_MAX }),
    price_cents: Int64({ description: 'Current price for new subscribers, in cents.' }),
    currency: Currency,
    billing_period: BillingPeriod,
    trial_days: Int64(),
    benefits: Benefits,
    is_active: Type.Boolean({ description: 'Whether the tier accepts new subscriptions.' }),
    level: Type.Union([Int64(), Type.Null()]),
    processor_price_id: ProcessorId('The current price at the payment processor; a price change creates a new one.'),
    processor_product_id: ProcessorId(),
    active_subscribers: Int64({ description: 'Subscriptions to this tier in status `active` (including those set to cancel at period end).' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Tier', title: 'Tier' },
);

export const CreateTierBody = Type.Object(
  {
    community_id: Uuid,
    name: Name,
    price_cents: PriceCents,
    billing_period: BillingPeriod,
    trial_days: Type.Optional(TrialDays),
    benefits: Type.Optional(Benefits),
    is_active: Type.Optional(Type.Boolean({ description: 'Default true. An inactive tier can be created and activated later.' })),
    level: Type.Optional(Type.Union([Level, Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateTierBody = Static<typeof CreateTierBody>;

export const UpdateTierBody = Type.Object(
  {
    name: Type.Optional(Name),
    price_cents: Type.Optional(PriceCents),
    billing_period: Type.Optional(BillingPeriod),
    trial_days: Type.Optional(TrialDays),
    benefits: Type.Optional(Benefits),
    is_active: Type.Optional(Type.Boolean({ description: '`false` deactivates (like DELETE); `true` reactivates a deactivated tier.' })),
    level: Type.Optional(Type.Union([Level, Type.Null()], { description: 'null removes the level.' })),
  },
  {
    additionalProperties: false,
    description:
      'Only the fields sent change. A new `price_cents` or `billing_period` on an active tier creates a new processor price for new subscribers; existing subscribers keep the price they have. On an inactive tier it is 409 `tier_inactive`.',
  },
);
export type UpdateTierBody = Static<typeof UpdateTierBody>;

export const ListTiersQuery = Type.Object(
  {
    ...PaginationQuery,
    community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only tiers of this community (404 if it is not yours).' })),
    is_active: Type.Optional(Type.Boolean({ description: 'Only active (true) or deactivated (false) tiers.' })),
  },
  { additionalProperties: false },
);
export type ListTiersQuery = Static<typeof ListTiersQuery>;
