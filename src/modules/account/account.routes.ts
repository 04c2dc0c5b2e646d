import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { authErrors, conflictError, Ok, processorError } from '../../http/schemas.js';
import { answerInTransaction, withoutUrl } from '../../http/idempotency.js';
import { Account, DashboardLink, OnboardingLink } from './account.schemas.js';
import type { AccountService } from './account.service.js';

const tags = ['Account'];

/** The creator's own processor account (DESIGN §8): its state, onboarding, and the processor's dashboard. */
export function accountRoutes(service: AccountService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/account',
      {
        schema: {
          tags,
          summary: "The creator's payment account",
          description:
            "The creator's connected account at the processor as Tribes knows it: whether members can pay (`charges_enabled`) and payouts run, what the processor still requires, the payout schedule, and one `status` to act on. Kept by the processor's `account.updated` events (re-read from the processor, never trusted from the payload) and by reconciliation; read from the processor at once if it never was.",
          response: { 200: Ok(Account), ...authErrors, ...processorError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request)) }),
    );

    app.post(
      '/account/onboarding-link',
      {
        schema: {
          tags,
          summary: 'Start or continue onboarding at the processor',
          description:
            "A fresh link to the processor's hosted onboarding (Stripe Connect Account Links, `account_onboarding`, collecting `eventually_due` up front). Send the creator there at once: it works once and expires within minutes. When it has expired or was used, the processor sends the creator to Tribes' refresh URL, which makes a new link and redirects (its token is bound to this creator, works once and for an hour); when the creator leaves, the return URL reads the account again and says where it stands. Also the way to provide requirements that come due later. The link is never stored or logged: an Idempotency-Key replay answers `url: null`.",
          response: { 201: Ok(OnboardingLink), ...authErrors, ...processorError },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.onboardingLink(creatorOf(request), answerInTransaction(request, reply, withoutUrl)) }),
    );

    app.post(
      '/account/dashboard-link',
      {
        schema: {
          tags,
          summary: "Sign in to the processor's dashboard",
          description:
            "A single-use sign-in link to the creator's own dashboard at the processor (Stripe's Express dashboard): balance, bank account, and the payout schedule (a `manual` schedule enables POST /api/v1/payouts/manual). 409 `onboarding_required` until onboarding was submitted. Never stored: an Idempotency-Key replay answers `url: null`.",
          response: { 201: Ok(DashboardLink), ...authErrors, ...conflictError('Onboarding is not submitted yet (`onboarding_required`).'), ...processorError },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.dashboardLink(creatorOf(request), answerInTransaction(request, reply, withoutUrl)) }),
    );
  };
}
