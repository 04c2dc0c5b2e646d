import { Type, type Static } from '@sinclair/typebox';
import { Int64, Timestamp, Uuid } from '../../http/schemas.js';
import { COMMUNITY_NAME_MAX } from '../communities/communities.schemas.js';
import { STATUS_MEANINGS, SUBSCRIPTION_STATUSES } from '../subscriptions/status.js';
import { ScheduledChange } from '../subscriptions/subscriptions.schemas.js';
import { TIER_NAME_MAX } from '../tiers/tiers.schemas.js';

export const ChangeTierBody = Type.Object(
  { tier_id: Type.String({ format: 'uuid', maxLength: 36, description: 'Another tier of the same community (or the current one, to drop a scheduled change).' }) },
  { additionalProperties: false },
);
export type ChangeTierBody = Static<typeof ChangeTierBody>;

/** The subscription as its member sees it after a tier change: no creator's note, no processor ids. */
export const ChangedSubscription = Type.Object(
  {
    id: Uuid,
    community_id: Uuid,
    community_name: Type.String({ maxLength: COMMUNITY_NAME_MAX }),
    tier_id: Uuid,
    tier_name: Type.String({ maxLength: TIER_NAME_MAX }),
    status: Type.String({ enum: [...SUBSCRIPTION_STATUSES], description: STATUS_MEANINGS }),
    price_cents: Int64({ description: 'The price it is billed at now: the new tier’s after an upgrade, still the current one while a downgrade waits.' }),
    billing_period: Type.String({ enum: ['monthly', 'quarterly', 'yearly'] }),
    current_period_end: Type.Union([Timestamp, Type.Null()]),
    cancel_at_period_end: Type.Boolean(),
    trial_end: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    scheduled_change: ScheduledChange,
  },
  { title: 'ChangedSubscription' },
);
