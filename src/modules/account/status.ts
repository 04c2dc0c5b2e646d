import type Stripe from 'stripe';
import type { AccountRequirements } from '../../db/types.js';

export const ACCOUNT_STATUSES = ['onboarding_required', 'action_required', 'pending_review', 'active', 'restricted'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** What each status means for the creator, and what to do (the OpenAPI description and `summary`). */
export const STATUS_MEANINGS: Record<AccountStatus, string> = {
  onboarding_required: 'payments are not set up yet: finish onboarding at the processor (POST /api/v1/account/onboarding-link) before members can pay',
  action_required: 'the account works, but the processor needs more information by `requirements.current_deadline`; without it charges stop then',
  pending_review: 'everything was submitted and the processor is verifying it; nothing to do but wait',
  active: 'members can pay and payouts run',
  restricted: 'the processor has disabled charges or payouts (`requirements.disabled_reason` says why); open a new onboarding link to provide what is past due',
};

/** The account state Tribes keeps (creators' account columns), as read from the processor. */
export interface AccountState {
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  requirements: AccountRequirements;
}

const list = (xs: string[] | null | undefined): string[] => [...(xs ?? [])];

/** The processor's account object reduced to what Tribes keeps. */
export function stateOf(account: Stripe.Account): AccountState {
  const r = account.requirements;
  return {
    charges_enabled: account.charges_enabled === true,
    payouts_enabled: account.payouts_enabled === true,
    details_submitted: account.details_submitted === true,
    requirements: {
      currently_due: list(r?.currently_due),
      eventually_due: list(r?.eventually_due),
      past_due: list(r?.past_due),
      pending_verification: list(r?.pending_verification),
      current_deadline: r?.current_deadline ? new Date(r.current_deadline * 1000).toISOString() : null,
      disabled_reason: r?.disabled_reason ?? null,
    },
  };
}

const UNDER_REVIEW = new Set(['requirements.pending_verification', 'under_review']);

/**
 * One word for the creator, in the order Stripe's Connect guide checks an account: not
 * submitted yet; something disabled (waiting on the processor's review, or restricted);
 * enabled but with requirements coming due (the deadline says by when); or all set.
 */
export function statusOf(state: AccountState): AccountStatus {
  const r = state.requirements;
  if (!state.details_submitted) return 'onboarding_required';
  const due = r.currently_due.length + r.past_due.length;
  if (!state.charges_enabled || !state.payouts_enabled) {
    const waiting = (r.disabled_reason !== null && UNDER_REVIEW.has(r.disabled_reason)) || (due === 0 && r.pending_verification.length > 0);
    return waiting ? 'pending_review' : 'restricted';
  }
  return due > 0 ? 'action_required' : 'active';
}
