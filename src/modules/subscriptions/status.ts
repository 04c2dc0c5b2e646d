import type { SubscriptionStatus } from '../../db/types.js';

/**
 * What a subscription's status means, defined once (the SQL side is the function
 * subscription_live of migrations/0020; access-while-paying.test.ts holds the two equal).
 *
 * The processor's statuses are mirrored as they are. Live — the paywall, programs, logging,
 * challenges, the member counts — is trialing, active (cancel at period end included, until
 * it ends) and past_due (a failed renewal the processor is still retrying). Not live:
 * `incomplete` (the first payment has not succeeded), `incomplete_expired` (it never did),
 * `unpaid` (retries exhausted, the subscription kept open), `paused` (a trial ended without a
 * payment method) and `canceled`.
 */
export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'canceled', 'incomplete', 'incomplete_expired', 'unpaid', 'paused'] as const satisfies readonly SubscriptionStatus[];

export const LIVE_STATUSES = ['trialing', 'active', 'past_due'] as const satisfies readonly SubscriptionStatus[];

export const isLive = (status: SubscriptionStatus): boolean => (LIVE_STATUSES as readonly string[]).includes(status);

/** For the API's descriptions of a status field. */
export const STATUS_MEANINGS =
  '`trialing` → `active` when the trial ends and the first charge succeeds; `past_due` after a failed renewal while the processor retries (3, 5 and 7 days after the first failure); `canceled` after the last failed retry, at the end of a period set to cancel, or on immediate cancel. From the processor as they are: `incomplete` (the first payment has not succeeded), `incomplete_expired` (it never did), `unpaid` (retries exhausted, the subscription left open) and `paused` (a trial ended without a payment method). Live — paywall, programs, challenges, member counts — are `trialing`, `active` and `past_due` only; the other five give no access and are not MRR.';
