import type { FastifyInstance, FastifyReply } from 'fastify';
import { INTERVALS, payoutSchedule, updateAccount } from './accounts.js';
import { WEEKDAYS } from './calendar.js';
import type { Core } from './core.js';
import { StripeError } from './errors.js';
import { esc, money, page } from './html.js';
import { balances } from './money.js';
import { completeOnboarding } from './onboarding.js';
import { Params } from './params.js';
import { findObject, getObject, saveObject, type Stored } from './store.js';

const COUNTRIES = ['US', 'BR', 'GB', 'CA', 'AU', 'MX', 'DE', 'FR', 'ES', 'PT', 'IE', 'NL'];

const send = (reply: FastifyReply, code: number, title: string, body: string) => reply.code(code).type('text/html; charset=utf-8').send(page(title, body));

const option = (value: string, selected: unknown) => `<option value="${esc(value)}"${value === selected ? ' selected' : ''}>${esc(value)}</option>`;

type Opened = { redirect: string } | { link: Stored; account: Stored };

/**
 * Stand-ins for Stripe's hosted Connect pages: Express onboarding (reached through an
 * account link) and the Express dashboard (through a login link). Both act through the same
 * functions as the API and test helpers, so a click and a call cannot drift apart.
 */
export function registerConnectPages(app: FastifyInstance, core: Core): void {
  const linkOf = (id: string, type: string) => core.read('', (ctx) => findObject(ctx, id, { type, account: '' }));

  app.get<{ Params: { id: string } }>('/connect/onboarding/:id', async (req, reply) => {
    if (!(await linkOf(req.params.id, 'account_link'))) return send(reply, 404, 'Not found', '<h1>Link not found</h1>');
    // Opening is what uses a link up, so it is decided under the lock: two tabs cannot both get the form.
    const { result } = await core.mutate({ account: '' }, async (ctx): Promise<Opened> => {
      const link = await getObject(ctx, req.params.id, 'account_link', { account: '' });
      const account = await findObject(ctx, link.internal.account, { type: 'account', account: '' });
      if (!account || link.internal.opened || link.data.expires_at < ctx.now) return { redirect: link.internal.refresh_url };
      link.internal.opened = true;
      await saveObject(ctx, link);
      return { link, account };
    });
    if ('redirect' in result) return reply.redirect(result.redirect, 303);
    const { link, account } = result;
    const a = account.data;
    const due: string[] = a.requirements?.[link.internal.fields] ?? [];
    const body =
      `<h1>${link.internal.type === 'account_update' ? 'Update your account' : 'Get paid with Tribes'}</h1>` +
      `<p>${esc(due.length)} item(s) ${link.internal.fields === 'eventually_due' ? 'eventually' : 'currently'} due. In test mode, Continue fills them all in.</p>` +
      `<form method="post">` +
      `<p><label>Business name<br><input name="business_name" value="${esc(a.business_profile?.name ?? '')}" readonly></label></p>` +
      `<p><label>Country<br><select name="country" disabled>${COUNTRIES.concat(COUNTRIES.includes(a.country) ? [] : [a.country]).map((c) => option(c, a.country)).join('')}</select></label></p>` +
      `<button>Continue</button></form>` +
      `<p><a href="${esc(link.internal.return_url)}">Leave</a></p>`;
    return send(reply, 200, 'Onboarding', body);
  });

  app.post<{ Params: { id: string } }>('/connect/onboarding/:id', async (req, reply) => {
    const found = await linkOf(req.params.id, 'account_link');
    if (!found) return send(reply, 404, 'Not found', '<h1>Link not found</h1>');
    // On the account's own time, like the onboard helper: the ToS date is the account's now.
    const { result, events } = await core.mutate({ account: found.internal.account }, async (ctx) => {
      const link = await getObject(ctx, found.id, 'account_link', { account: '' });
      const account = await findObject(ctx, link.internal.account, { type: 'account', account: '', forUpdate: true });
      // Only the form the link showed may be submitted, and only once.
      if (!account || !link.internal.opened || link.internal.completed) return link.internal.refresh_url as string;
      await completeOnboarding(ctx, account);
      link.internal.completed = true;
      await saveObject(ctx, link);
      return link.internal.return_url as string;
    });
    await core.deliverer.deliverEvents(events);
    return reply.redirect(result, 303);
  });

  /** The login link's account while the link is valid (5 minutes of simulator time). */
  async function dashboardAccount(id: string): Promise<Stored | undefined> {
    const link = await linkOf(id, 'login_link');
    if (!link || link.data.expires_at < (await core.now())) return undefined;
    return core.read('', (ctx) => findObject(ctx, link.internal.account, { type: 'account', account: '' }));
  }

  async function dashboard(reply: FastifyReply, account: Stored, note: { error?: string; saved?: boolean } = {}) {
    const sums = await core.read(account.id, (ctx) => balances(ctx));
    const rows = [...sums].map(([cur, b]) => `<li>${esc(money(b.available, cur))} available, ${esc(money(b.pending, cur))} pending</li>`).join('');
    const s = payoutSchedule(account);
    const when = s.interval === 'weekly' ? ` on ${s.weekly_anchor}` : s.interval === 'monthly' ? ` on day ${s.monthly_anchor}` : '';
    const body =
      `<h1>${esc(account.data.business_profile?.name ?? account.data.email ?? account.id)}</h1>` +
      `<h2>Balance</h2><ul>${rows || '<li>No balance yet</li>'}</ul>` +
      `<h2>Payouts</h2><p>Schedule: ${esc(s.interval)}${esc(when)}</p>` +
      (note.error ? `<p class="err">${esc(note.error)}</p>` : note.saved ? '<p>Payout schedule saved.</p>' : '') +
      `<form method="post">` +
      `<p><label>Interval <select name="interval">${INTERVALS.map((i) => option(i, s.interval)).join('')}</select></label></p>` +
      `<p><label>Weekly on <select name="weekly_anchor">${WEEKDAYS.map((d) => option(d, s.weekly_anchor ?? 'monday')).join('')}</select></label></p>` +
      `<p><label>Monthly on day <input name="monthly_anchor" type="number" min="1" max="31" value="${esc(s.monthly_anchor ?? 1)}"></label></p>` +
      `<button>Save schedule</button></form>`;
    return send(reply, note.error ? 400 : 200, 'Dashboard', body);
  }

  const expired = (reply: FastifyReply) => send(reply, 404, 'Not found', '<h1>This login link has expired or does not exist</h1><p>Ask the platform for a new one.</p>');

  app.get<{ Params: { id: string } }>('/connect/dashboard/:id', async (req, reply) => {
    const account = await dashboardAccount(req.params.id);
    return account ? dashboard(reply, account) : expired(reply);
  });

  app.post<{ Params: { id: string }; Body: Record<string, unknown> }>('/connect/dashboard/:id', async (req, reply) => {
    const account = await dashboardAccount(req.params.id);
    if (!account) return expired(reply);
    const form = req.body && typeof req.body === 'object' ? req.body : {};
    // The form carries every anchor; only the chosen interval's goes on, as the API would take it.
    const schedule: Record<string, unknown> = { interval: form.interval };
    if (form.interval === 'weekly') schedule.weekly_anchor = form.weekly_anchor;
    if (form.interval === 'monthly') schedule.monthly_anchor = form.monthly_anchor;
    try {
      const { events } = await core.mutate({ account: '' }, (ctx) => updateAccount(ctx, account.id, new Params({ settings: { payouts: { schedule } } })));
      await core.deliverer.deliverEvents(events);
    } catch (err) {
      if (err instanceof StripeError) return dashboard(reply, account, { error: err.message });
      throw err;
    }
    return dashboard(reply, (await dashboardAccount(req.params.id)) ?? account, { saved: true });
  });
}
