import { Type, type Static } from '@sinclair/typebox';
import { MemberSubscription } from '../member-billing/member-billing.schemas.js';

export const ChangeTierBody = Type.Object(
  { tier_id: Type.String({ format: 'uuid', maxLength: 36, description: 'Another tier of the same community (or the current one, to drop a scheduled change).' }) },
  { additionalProperties: false },
);
export type ChangeTierBody = Static<typeof ChangeTierBody>;

/** The subscription as its member sees it after a tier change: the member's one view (member-billing). */
export const ChangedSubscription = MemberSubscription;
