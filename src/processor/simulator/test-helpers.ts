import type { FastifyInstance, FastifyRequest } from 'fastify';
import { startAccountClock } from './accounts.js';
import { advanceAccountClock, advanceClock } from './clock.js';
import { completeSession } from './checkout.js';
import type { Core } from './core.js';
import { behaviorCard, setCard } from './customers.js';
import { invalidRequest, missingParam, noSuch } from './errors.js';
import { Params } from './params.js';
import { addRequirements, completeOnboarding } from './onboarding.js';
import { failPayout } from './payouts.js';
import { findObject, getObject, type Ctx, type Stored } from './store.js';

const bodyOf = (req: FastifyRequest): Params => new Params(req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {});

/** A list of requirement field names: absent, or a non-empty array of non-empty strings. */
function fieldList(p: Params, name: string): string[] | undefined {
  const v = p.get(name);
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length === 0) throw invalidRequest(`Invalid array: ${name} must be a non-empty array of requirement field names.`, name);
  v.forEach((f, i) => {
    if (typeof f !== 'string' || f.trim() === '') throw invalidRequest(`Invalid string: ${name}[${i}] must be a non-empty field name such as individual.verification.document.`, `${name}[${i}]`);
  });
  return v as string[];
}

/**
 * DESIGN §6 test helpers. They take JSON (or form) bodies, need no API key, and find their
 * object on whichever account it lives, with or without Stripe-Account. Every event they
 * cause has had its first delivery attempt before they answer.
 */
export function registerTestHelpers(app: FastifyInstance, core: Core): void {
  /** Finds which account an object lives on, then runs `fn` scoped to it and delivers its events. */
  async function onObject<T>(id: string, type: string, noun: string, fn: (ctx: Ctx, stored: Stored) => Promise<T>): Promise<T> {
    const located = await core.read('', (ctx) => findObject(ctx, id, { type, account: 'any' }));
    if (!located) throw noSuch(noun, id, 'id');
    const { result, events } = await core.mutate({ account: located.account }, async (ctx) => fn(ctx, await getObject(ctx, id, type, { noun })));
    await core.deliverer.deliverEvents(events);
    return result;
  }

  app.get('/v1/test_helpers/clock', async () => ({ now: await core.now() }));

  app.post('/v1/test_helpers/clock/advance', async (req) => {
    const seconds = bodyOf(req).reqInt('seconds', { min: 0 });
    const { now } = await advanceClock(core, seconds);
    return { now };
  });

  // An account's own clock (store.ts readNow): started in the past while the account is fresh, then advanced.
  /** 404s (as Stripe words it) unless `id` is an account. */
  const anAccount = (id: string) => core.read('', (ctx) => getObject(ctx, id, 'account', { account: '', noun: 'account' }));

  /** Runs `fn` on a connected account at the account's own time, then delivers its events. */
  async function onAccount<T>(id: string, fn: (ctx: Ctx, account: Stored) => Promise<T>): Promise<T> {
    await anAccount(id);
    const { result, events } = await core.mutate({ account: id }, async (ctx) => fn(ctx, await getObject(ctx, id, 'account', { account: '', noun: 'account' })));
    await core.deliverer.deliverEvents(events);
    return result;
  }

  app.get<{ Params: { id: string } }>('/v1/test_helpers/accounts/:id/clock', async (req) => {
    await anAccount(req.params.id);
    return { id: req.params.id, now: await core.now(req.params.id) };
  });

  app.post<{ Params: { id: string } }>('/v1/test_helpers/accounts/:id/clock', async (req) => {
    const t = bodyOf(req).reqInt('now', { min: 0 });
    return (await core.mutate({ account: '' }, (ctx) => startAccountClock(ctx, req.params.id, t))).result;
  });

  app.post<{ Params: { id: string } }>('/v1/test_helpers/accounts/:id/clock/advance', async (req) => {
    const seconds = bodyOf(req).reqInt('seconds', { min: 0 });
    await anAccount(req.params.id);
    const { now } = await advanceAccountClock(core, req.params.id, seconds);
    return { id: req.params.id, now };
  });

  // Connect onboarding (DESIGN §6): runs on the account's own time, like everything else of it.
  app.post<{ Params: { id: string } }>('/v1/test_helpers/accounts/:id/onboard', async (req) => {
    return onAccount(req.params.id, completeOnboarding);
  });

  app.post<{ Params: { id: string } }>('/v1/test_helpers/accounts/:id/requirements', async (req) => {
    const p = bodyOf(req);
    const currentlyDue = fieldList(p, 'currently_due');
    const pendingVerification = fieldList(p, 'pending_verification');
    if (!currentlyDue && !pendingVerification) throw missingParam('currently_due');
    // A field that is due must be due by some time; one under review needs none.
    const deadlineSeconds = currentlyDue ? p.reqInt('deadline_seconds', { min: 0 }) : p.int('deadline_seconds', { min: 0 });
    return onAccount(req.params.id, (ctx, account) =>
      addRequirements(ctx, account, { currentlyDue: currentlyDue ?? [], deadlineSeconds, pendingVerification: pendingVerification ?? [] }),
    );
  });

  app.post<{ Params: { id: string } }>('/v1/test_helpers/checkout_sessions/:id/complete', async (req) => {
    const p = bodyOf(req);
    const paymentMethod = p.str('payment_method') ?? 'pm_card_visa';
    if (!paymentMethod.startsWith('pm_')) throw invalidRequest('payment_method must be a test PaymentMethod such as pm_card_visa.', 'payment_method');
    return onObject(req.params.id, 'checkout.session', 'checkout.session', (ctx, session) =>
      completeSession(ctx, session, { paymentMethod, email: p.str('email'), name: p.str('name') }),
    );
  });

  app.post<{ Params: { id: string } }>('/v1/test_helpers/customers/:id/payment_behavior', async (req) => {
    const fail = bodyOf(req).bool('fail');
    if (fail === undefined) throw invalidRequest('Missing required param: fail.', 'fail', 'parameter_missing');
    return onObject(req.params.id, 'customer', 'customer', async (ctx, customer) => {
      await setCard(ctx, customer, behaviorCard(fail));
      return customer.data;
    });
  });

  app.post<{ Params: { id: string } }>('/v1/test_helpers/payouts/:id/fail', async (req) => {
    const p = bodyOf(req);
    return onObject(req.params.id, 'payout', 'payout', (ctx, payout) =>
      failPayout(ctx, payout, p.str('failure_code') ?? undefined, p.str('failure_message') ?? undefined),
    );
  });
}
