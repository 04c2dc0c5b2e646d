import { invalidRequest, missingParam } from './errors.js';
import { changed, emit } from './events.js';
import { nextPayoutTime, WEEKDAYS, type PayoutSchedule } from './calendar.js';
import { notOnboarded } from './onboarding.js';
import type { Params } from './params.js';
import { cancelJobs, deleteObject, getObject, insertObject, listObjects, newId, readNow, saveObject, scheduleJob, tbl, writeAccountNow, type Ctx, type Stored } from './store.js';

/** The platform itself, as `GET /v1/account` without Stripe-Account shows it. */
export const PLATFORM_ACCOUNT_ID = 'acct_1TribesSimPlatform0';

const CURRENCY_BY_COUNTRY: Record<string, string> = {
  US: 'usd', BR: 'brl', GB: 'gbp', CA: 'cad', AU: 'aud', MX: 'mxn', JP: 'jpy', IN: 'inr',
  DE: 'eur', FR: 'eur', ES: 'eur', IT: 'eur', PT: 'eur', NL: 'eur', IE: 'eur', BE: 'eur', AT: 'eur', FI: 'eur',
};

export const INTERVALS = ['daily', 'weekly', 'monthly', 'manual'] as const;

/**
 * Applies `settings[payouts][schedule]` params the way Stripe fills defaults: switching to
 * weekly without an anchor pays on Mondays, monthly without one on the 1st; the anchor of
 * the other intervals is dropped. `delay_days` is the 7-day pending period of this model.
 */
function applySchedule(current: any, p: Params): any {
  const interval = p.enumOf('settings[payouts][schedule][interval]', INTERVALS) ?? current.interval;
  const weekly = p.enumOf('settings[payouts][schedule][weekly_anchor]', WEEKDAYS);
  const monthly = p.int('settings[payouts][schedule][monthly_anchor]', { min: 1, max: 31 });
  const next: any = { delay_days: 7, interval };
  if (interval === 'weekly') next.weekly_anchor = weekly ?? current.weekly_anchor ?? 'monday';
  if (interval === 'monthly') next.monthly_anchor = monthly ?? current.monthly_anchor ?? 1;
  if (weekly && interval !== 'weekly') throw invalidRequest('weekly_anchor is only allowed with a weekly interval.', 'settings[payouts][schedule][weekly_anchor]');
  if (monthly && interval !== 'monthly') throw invalidRequest('monthly_anchor is only allowed with a monthly interval.', 'settings[payouts][schedule][monthly_anchor]');
  return next;
}

export const payoutSchedule = (account: Stored): PayoutSchedule => account.data.settings.payouts.schedule as PayoutSchedule;

/** Keeps exactly one pending automatic-payout job per account, at the schedule's next day. */
export async function reschedulePayouts(ctx: Ctx, account: Stored): Promise<void> {
  await cancelJobs(ctx, account.id, ['auto_payout']);
  // The platform changes a schedule at the shared time; the account's next payout day is on its own clock.
  const at = nextPayoutTime(await readNow(ctx.db, ctx.env.schema, account.id), payoutSchedule(account));
  if (at !== null) await scheduleJob(ctx, 'auto_payout', account.id, at, {}, account.id);
}

export async function createAccount(ctx: Ctx, p: Params): Promise<unknown> {
  if (ctx.account) throw invalidRequest('Connected accounts cannot create other accounts.');
  const type = p.enumOf('type', ['express', 'standard', 'custom'] as const) ?? 'express';
  const country = (p.str('country') ?? 'US').toUpperCase();
  const id = newId('acct', 16);
  const schedule = applySchedule({ interval: 'daily' }, p);
  const data = {
    id,
    object: 'account',
    business_profile: {
      name: p.str('business_profile[name]') ?? null,
      url: p.str('business_profile[url]') ?? null,
      mcc: p.str('business_profile[mcc]') ?? null,
      product_description: p.str('business_profile[product_description]') ?? null,
      support_email: null,
    },
    business_type: p.str('business_type') ?? null,
    controller: { type: 'application', is_controller: true },
    country,
    created: ctx.now,
    default_currency: p.str('default_currency') ?? CURRENCY_BY_COUNTRY[country] ?? 'usd',
    email: p.str('email') ?? null,
    external_accounts: { object: 'list', data: [], has_more: false, url: `/v1/accounts/${id}/external_accounts` },
    livemode: false,
    metadata: p.metadata(),
    settings: {
      dashboard: { display_name: p.str('business_profile[name]') ?? null, timezone: 'Etc/UTC' },
      payouts: { debit_negative_balances: true, schedule, statement_descriptor: null },
    },
    type,
    // As at Stripe, it can neither charge nor pay out until the holder completes onboarding.
    ...notOnboarded(Object.keys((p.get('capabilities') as object) ?? { card_payments: 1, transfers: 1 })),
  };
  const stored = await insertObject(ctx, 'account', data, {}, '');
  await reschedulePayouts(ctx, stored);
  return data;
}

export async function getAccount(ctx: Ctx, id: string): Promise<Stored> {
  return getObject(ctx, id, 'account', { account: '', param: 'account' });
}

export async function retrieveAccount(ctx: Ctx, id: string | undefined): Promise<unknown> {
  const target = id ?? ctx.account;
  if (!target || target === PLATFORM_ACCOUNT_ID) {
    return { id: PLATFORM_ACCOUNT_ID, object: 'account', type: 'standard', country: 'US', default_currency: 'usd', charges_enabled: true, payouts_enabled: true, details_submitted: true, livemode: false, metadata: {}, settings: { payouts: { schedule: { delay_days: 2, interval: 'daily' } } } };
  }
  if (ctx.account && target !== ctx.account) throw invalidRequest('A connected account can only retrieve itself.', 'account');
  return (await getAccount(ctx, target)).data;
}

export async function updateAccount(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const acct = await getAccount(ctx, id);
  const before = structuredClone(acct.data);
  const d = acct.data;
  if (p.has('email')) d.email = p.str('email') || null;
  if (p.has('business_type')) d.business_type = p.str('business_type') || null;
  for (const k of ['name', 'url', 'mcc', 'product_description', 'support_email'] as const) {
    if (p.has(`business_profile[${k}]`)) d.business_profile[k] = p.str(`business_profile[${k}]`) || null;
  }
  if (p.has('default_currency')) d.default_currency = p.str('default_currency');
  d.metadata = p.metadata(d.metadata);
  if (p.has('settings[payouts][schedule]')) d.settings.payouts.schedule = applySchedule(d.settings.payouts.schedule, p);
  await saveObject(ctx, acct);
  if (JSON.stringify(before.settings.payouts.schedule) !== JSON.stringify(d.settings.payouts.schedule)) await reschedulePayouts(ctx, acct);
  const prev = changed(before, d);
  if (Object.keys(prev).length) await emit(ctx, 'account.updated', d, prev, acct.id);
  return d;
}

export async function deleteAccount(ctx: Ctx, id: string): Promise<unknown> {
  await getAccount(ctx, id);
  await cancelJobs(ctx, id);
  await deleteObject(ctx, id);
  return { id, object: 'account', deleted: true };
}

export const listAccounts = (ctx: Ctx, p: Params) => listObjects(ctx, 'account', p, { url: '/v1/accounts', account: '' });

/** How long an account link or login link works, in simulator seconds (Stripe: a few minutes). */
export const LINK_TTL = 300;

/**
 * POST /v1/account_links: a single-use link to the simulator's hosted onboarding page
 * (connect-pages.ts). Opening it again, or after it expired, lands on `refresh_url`, where
 * the platform is expected to make a new one — as at Stripe.
 */
export async function createAccountLink(ctx: Ctx, p: Params): Promise<unknown> {
  const account = await getAccount(ctx, p.reqStr('account'));
  const type = p.enumOf('type', ['account_onboarding', 'account_update'] as const);
  if (!type) throw missingParam('type');
  const fields = p.enumOf('collection_options[fields]', ['currently_due', 'eventually_due'] as const) ?? 'currently_due';
  const refreshUrl = p.reqStr('refresh_url');
  const returnUrl = p.reqStr('return_url');
  const id = newId('acctlink');
  const data = { id, object: 'account_link', created: ctx.now, expires_at: ctx.now + LINK_TTL, url: `${ctx.env.baseUrl}/connect/onboarding/${id}` };
  await insertObject(ctx, 'account_link', data, { account: account.id, type, fields, return_url: returnUrl, refresh_url: refreshUrl, opened: false, completed: false }, '');
  const { id: _id, ...link } = data;
  return link;
}

/**
 * POST /v1/accounts/{id}/login_links: the hosted dashboard, for onboarded accounts only.
 * The URL carries a fresh id of its own, so knowing an account id never opens its dashboard.
 */
export async function createLoginLink(ctx: Ctx, accountId: string): Promise<unknown> {
  const account = await getAccount(ctx, accountId);
  if (!account.data.details_submitted) {
    throw invalidRequest(`Cannot create a login link for an account that has not completed onboarding (${account.id}).`, 'account');
  }
  const id = newId('lael');
  const data = { id, object: 'login_link', created: ctx.now, expires_at: ctx.now + LINK_TTL, url: `${ctx.env.baseUrl}/connect/dashboard/${id}` };
  await insertObject(ctx, 'login_link', data, { account: account.id }, '');
  return { object: 'login_link', created: data.created, url: data.url };
}

/** How far back a fresh account's history may start. */
const MAX_HISTORY_SECONDS = 2 * 366 * 86_400;

/**
 * POST /v1/test_helpers/accounts/{id}/clock with {"now": t}: a fresh connected account starts
 * its own clock at `t`, in the past, so months of its history (subscriptions, renewals,
 * payouts) can be made by advancing that clock up to today. Only before the account has made
 * anything: the clock still never runs backwards for an object that exists. The account
 * itself is re-dated to `t` and its payout schedule restarts from there.
 */
export async function startAccountClock(ctx: Ctx, id: string, t: number): Promise<{ id: string; now: number }> {
  const account = await getAccount(ctx, id);
  if (t > ctx.now) throw invalidRequest('An account clock can only be started in the past; move it forward with /clock/advance.', 'now');
  if (t < ctx.now - MAX_HISTORY_SECONDS) throw invalidRequest('An account clock can start at most two years in the past.', 'now');
  const made = await tbl(ctx).selectFrom('objects').select('id').where('account', '=', id).limit(1).executeTakeFirst();
  if (made) {
    throw invalidRequest(
      `Account ${id} has already made objects (${made.id}); its clock can only be started before it makes any. Advance it instead, or use a new account.`,
      'now',
    );
  }
  await writeAccountNow(ctx.db, ctx.env.schema, id, t);
  account.data.created = t;
  // An account that has accepted the terms did so at its (new) creation; one that has not still owes them.
  if (account.data.tos_acceptance?.date != null) account.data.tos_acceptance = { ...account.data.tos_acceptance, date: t };
  await saveObject(ctx, account);
  await tbl(ctx).updateTable('objects').set({ created: t }).where('id', '=', id).execute();
  await reschedulePayouts(ctx, account);
  return { id, now: t };
}
