import { Type } from '@fastify/type-provider-typebox';
import { Timestamp } from '../../http/schemas.js';
import { ACCOUNT_STATUSES, STATUS_MEANINGS } from './status.js';

// Stripe's requirement names are dotted paths (`individual.verification.document`, `person_…[0].dob.day`).
const Fields = (description: string) => Type.Array(Type.String({ maxLength: 255, pattern: '^[A-Za-z0-9_.\\[\\]-]+$' }), { description, maxItems: 500 });

export const Account = Type.Object(
  {
    processor_account_id: Type.String({ maxLength: 255, pattern: '^acct_[A-Za-z0-9]+$', description: "The creator's connected account at the processor (Stripe: `acct_…`)." }),
    status: Type.String({
      enum: [...ACCOUNT_STATUSES],
      description: `One word for the account's state: ${ACCOUNT_STATUSES.map((s) => `\`${s}\`: ${STATUS_MEANINGS[s]}`).join('; ')}.`,
    }),
    summary: Type.String({ enum: ACCOUNT_STATUSES.map((s) => STATUS_MEANINGS[s]), description: 'What `status` means for the creator, and what to do, in a sentence.' }),
    charges_enabled: Type.Boolean({ description: 'Members can pay. While false, a member\'s checkout is 409 `payments_not_enabled` and discovery shows the communities as not accepting members.' }),
    payouts_enabled: Type.Boolean({ description: 'The processor pays the balance out. While false, a manual payout is 422 `payouts_not_enabled`.' }),
    details_submitted: Type.Boolean({ description: 'Onboarding was submitted at the processor.' }),
    requirements: Type.Object(
      {
        currently_due: Fields('Information needed by `current_deadline` to keep the account enabled.'),
        eventually_due: Fields('Information needed eventually (the onboarding link collects it up front).'),
        past_due: Fields('Information past its deadline: the account is restricted until it is provided.'),
        pending_verification: Fields('Information submitted and being verified by the processor.'),
        current_deadline: Type.Union([Timestamp, Type.Null()], { description: 'When `currently_due` must be provided.' }),
        disabled_reason: Type.Union([Type.String({ maxLength: 255, pattern: '^[a-z0-9_.]+$' }), Type.Null()], { description: "The processor's reason charges or payouts are disabled (e.g. `requirements.past_due`)." }),
      },
      { description: "What the processor still requires (Stripe's `requirements` hash)." },
    ),
    payout_schedule: Type.String({ enum: ['daily', 'weekly', 'monthly', 'manual'], description: 'Chosen in the processor dashboard (POST /api/v1/account/dashboard-link).' }),
    payout_schedule_anchor: Type.Object(
      { weekly_anchor: Type.Optional(Type.String({ enum: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] })), monthly_anchor: Type.Optional(Type.Integer({ minimum: 1, maximum: 31, format: 'int32' })) },
      { description: 'The weekday of a weekly schedule, the day of a monthly one.' },
    ),
    synced_at: Type.Union([Timestamp, Type.Null()], { description: 'When Tribes last read the account from the processor.' }),
  },
  { title: 'Account' },
);

export const OnboardingLink = Type.Object({
  url: Type.Union([Type.String({ format: 'uri', maxLength: 2048 }), Type.Null()], {
    description: "The processor's hosted onboarding: send the creator there now. It works once and expires within minutes. Null in a replayed answer (an Idempotency-Key retry): links are never stored, ask for a new one.",
  }),
  expires_at: Timestamp,
});

export const DashboardLink = Type.Object({
  url: Type.Union([Type.String({ format: 'uri', maxLength: 2048 }), Type.Null()], {
    description: "A single-use sign-in link to the creator's own processor dashboard (balance, payout schedule). Null in a replayed answer: links are never stored.",
  }),
});
