import { changed, emit } from './events.js';
import { cancelJobs, findObject, saveObject, scheduleJob, type Ctx, type Stored } from './store.js';

/**
 * What a fresh Express account (US individual) owes before it may charge: Stripe lists the
 * same fields as currently due, eventually due and past due, so the account is disabled
 * with `requirements.past_due` until the holder goes through onboarding.
 */
const EXPRESS_FIELDS = [
  'business_profile.mcc',
  'business_profile.url',
  'business_type',
  'external_account',
  'individual.address.city',
  'individual.address.line1',
  'individual.address.postal_code',
  'individual.address.state',
  'individual.dob.day',
  'individual.dob.month',
  'individual.dob.year',
  'individual.email',
  'individual.first_name',
  'individual.last_name',
  'individual.phone',
  'individual.ssn_last_4',
  'tos_acceptance.date',
  'tos_acceptance.ip',
];

const noRequirements = () => ({
  alternatives: [], current_deadline: null, currently_due: [] as string[], disabled_reason: null as string | null,
  errors: [], eventually_due: [] as string[], past_due: [] as string[], pending_verification: [] as string[],
});

/** The onboarding-related fields of a new connected account: nothing submitted, nothing enabled. */
export function notOnboarded(capabilities: string[]) {
  return {
    capabilities: Object.fromEntries(capabilities.map((k) => [k, 'inactive'])),
    charges_enabled: false,
    details_submitted: false,
    payouts_enabled: false,
    requirements: {
      ...noRequirements(),
      currently_due: [...EXPRESS_FIELDS],
      disabled_reason: 'requirements.past_due',
      eventually_due: [...EXPRESS_FIELDS],
      past_due: [...EXPRESS_FIELDS],
    },
    tos_acceptance: { date: null as number | null },
  };
}

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
  d.requirements = noRequirements();
  d.tos_acceptance = { ...d.tos_acceptance, date: d.tos_acceptance?.date ?? ctx.now };
  const prev = changed(before, d);
  // Whatever was due is met now, so a pending deadline has nothing left to enforce.
  await cancelJobs(ctx, account.id, [DEADLINE_JOB]);
  if (Object.keys(prev).length === 0) return d;
  await saveObject(ctx, account);
  await emit(ctx, 'account.updated', d, prev, account.id);
  return d;
}

const union = (a: string[] | undefined, b: string[]): string[] => [...new Set([...(a ?? []), ...b])];

/**
 * POST /v1/test_helpers/accounts/{id}/requirements: Stripe asks for more (say an identity
 * document) due by a deadline. The account keeps charging until then; `pendingVerification`
 * lists fields submitted and under review ("pending review" in a dashboard).
 */
export async function addRequirements(
  ctx: Ctx,
  account: Stored,
  req: { currentlyDue: string[]; deadlineSeconds: number | undefined; pendingVerification: string[] },
): Promise<unknown> {
  const d = account.data;
  const before = structuredClone(d);
  const r = d.requirements;
  r.currently_due = union(r.currently_due, req.currentlyDue);
  r.eventually_due = union(r.eventually_due, req.currentlyDue);
  r.pending_verification = union(r.pending_verification, req.pendingVerification);
  if (req.currentlyDue.length && req.deadlineSeconds !== undefined) {
    const deadline = ctx.now + req.deadlineSeconds;
    r.current_deadline = deadline;
    await scheduleJob(ctx, DEADLINE_JOB, account.id, deadline, { fields: req.currentlyDue, deadline }, account.id);
  }
  const prev = changed(before, d);
  if (Object.keys(prev).length === 0) return d;
  await saveObject(ctx, account);
  await emit(ctx, 'account.updated', d, prev, account.id);
  return d;
}

/**
 * Job `requirements_deadline` (ref = account): the fields added with this deadline that are
 * still due become past due and the account stops charging, as Stripe disables charges when
 * a deadline passes unmet. Onboarding cancels the job; if it runs anyway with nothing left
 * due (met some other way), it does nothing.
 */
export async function requirementsDeadline(ctx: Ctx, accountId: string, payload: { fields: string[]; deadline: number }): Promise<void> {
  const account = await findObject(ctx, accountId, { type: 'account', account: '', forUpdate: true });
  if (!account) return;
  const d = account.data;
  const unmet = payload.fields.filter((f) => d.requirements.currently_due?.includes(f));
  if (unmet.length === 0) return;
  const before = structuredClone(d);
  d.requirements.past_due = union(d.requirements.past_due, unmet);
  d.requirements.disabled_reason = 'requirements.past_due';
  // A later requirement may have set a deadline of its own; that one still stands.
  if (d.requirements.current_deadline === payload.deadline) d.requirements.current_deadline = null;
  d.charges_enabled = false;
  await saveObject(ctx, account);
  await emit(ctx, 'account.updated', d, changed(before, d), account.id);
}
