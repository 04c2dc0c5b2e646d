import { changed, emit } from './events.js';
import { cancelJobs, saveObject, type Ctx, type Stored } from './store.js';

/** The job that restricts an account whose added requirements are still due at their deadline. */
export const DEADLINE_JOB = 'requirements_deadline';

/**
 * POST /v1/test_helpers/accounts/{id}/onboard and the hosted onboarding page's Continue:
 * the account holder has submitted everything. Idempotent — an onboarded account is left
 * as it is and no event is emitted. A ToS date already recorded is kept (it is when the
 * terms were accepted, not when the last requirement was met).
 */
export async function completeOnboarding(ctx: Ctx, account: Stored): Promise<unknown> {
  const d = account.data;
  const before = structuredClone(d);
  d.details_submitted = true;
  d.charges_enabled = true;
  d.payouts_enabled = true;
  d.capabilities = Object.fromEntries(Object.keys(d.capabilities ?? {}).map((k) => [k, 'active']));
  d.requirements = { alternatives: [], current_deadline: null, currently_due: [], disabled_reason: null, errors: [], eventually_due: [], past_due: [], pending_verification: [] };
  d.tos_acceptance = { ...d.tos_acceptance, date: d.tos_acceptance?.date ?? ctx.now };
  const prev = changed(before, d);
  // Whatever was due is met now, so a pending deadline has nothing left to enforce.
  await cancelJobs(ctx, account.id, [DEADLINE_JOB]);
  if (Object.keys(prev).length === 0) return d;
  await saveObject(ctx, account);
  await emit(ctx, 'account.updated', d, prev, account.id);
  return d;
}
