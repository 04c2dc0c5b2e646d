import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Core } from './core.js';
import { isDeclining } from './customers.js';
import { StripeError } from './errors.js';
import { esc, money, page } from './html.js';
import { Params } from './params.js';
import { portalCancel, portalUpdateCard } from './portal.js';
import { findObject, getObject, listObjects, type Ctx, type Stored } from './store.js';

/** The test cards the portal offers, as their test PaymentMethod tokens. */
const CARDS: Record<string, string> = { pm_card_visa: 'Visa 4242 (pays)', pm_card_chargeDeclined: 'Visa 0002 (declines)' };

const send = (reply: FastifyReply, code: number, title: string, body: string) => reply.code(code).type('text/html; charset=utf-8').send(page(title, body));
const day = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
const cardOf = (pm: string | null) => (!pm ? 'No card on file' : isDeclining(pm) ? 'Visa •••• 0002' : 'Visa •••• 4242');

interface Opened {
  session: Stored;
  config: any;
  customer: Stored;
}

/**
 * Stand-in for Stripe's hosted customer portal, reached through a billing portal session's
 * URL for an hour of the account's time. Its forms act through the same functions as the API
 * and the test helpers (portal.ts), so a click and a call cannot drift apart.
 */
export function registerPortalPages(app: FastifyInstance, core: Core): void {
  /** The session with its configuration and customer while it is valid, else undefined. */
  async function open(id: string): Promise<Opened | undefined> {
    const session = await core.read('', (ctx) => findObject(ctx, id, { type: 'billing_portal.session', account: 'any' }));
    if (!session) return undefined;
    return core.read(session.account, async (ctx) => {
      if (session.internal.expires_at < ctx.now) return undefined;
      const config = await findObject(ctx, session.data.configuration, { type: 'billing_portal.configuration' });
      const customer = await findObject(ctx, session.data.customer, { type: 'customer' });
      return config && customer ? { session, config: config.data, customer } : undefined;
    });
  }

  const gone = (reply: FastifyReply) => send(reply, 404, 'Not found', '<h1>This portal session has expired or does not exist</h1><p>Return to the site and open the portal again.</p>');

  async function subscriptionsHtml(ctx: Ctx, o: Opened): Promise<string> {
    const subs = await listObjects(ctx, 'subscription', new Params({ limit: 100 }), { url: '', where: [[['customer'], o.customer.id]] });
    const canCancel = o.config.features.subscription_cancel.enabled;
    const rows = [];
    for (const s of subs.data as any[]) {
      const item = s.items.data[0];
      const product = await findObject(ctx, item.price.product, { type: 'product' });
      const r = item.price.recurring;
      const every = r.interval_count === 1 ? `per ${r.interval}` : `every ${r.interval_count} ${r.interval}s`;
      const ends = s.status === 'canceled' ? `ended ${day(s.ended_at)}` : s.cancel_at_period_end ? `cancels at period end, ${day(item.current_period_end)}` : `renews ${day(item.current_period_end)}`;
      const cancel =
        canCancel && s.status !== 'canceled' && !s.cancel_at_period_end
          ? `<form method="post" action="${esc(`/p/session/${o.session.id}/cancel`)}"><input type="hidden" name="subscription" value="${esc(s.id)}"><button>Cancel</button></form>`
          : '';
      rows.push(`<li><strong>${esc(product?.data.name ?? item.price.id)}</strong> — ${esc(money(item.price.unit_amount, item.price.currency))} ${esc(every)} — <span class="status">${esc(s.status)}</span> — ${esc(ends)}${cancel}</li>`);
    }
    return `<h2>Subscriptions</h2><ul>${rows.join('') || '<li>No subscriptions</li>'}</ul>`;
  }

  async function invoicesHtml(ctx: Ctx, o: Opened): Promise<string> {
    if (!o.config.features.invoice_history.enabled) return '';
    const invoices = await listObjects(ctx, 'invoice', new Params({ limit: 100 }), { url: '', where: [[['customer'], o.customer.id]] });
    const rows = (invoices.data as any[]).map(
      (i) => `<li><a href="${esc(`/invoices/${i.id}`)}">${esc(i.number)}</a> — ${esc(day(i.created))} — ${esc(money(i.total, i.currency))} — ${esc(i.status)}</li>`,
    );
    return `<h2>Invoice history</h2><ul>${rows.join('') || '<li>No invoices</li>'}</ul>`;
  }

  function cardHtml(o: Opened): string {
    const pm = o.customer.data.invoice_settings?.default_payment_method ?? null;
    if (!o.config.features.payment_method_update.enabled) return `<h2>Payment method</h2><p>${esc(cardOf(pm))}</p>`;
    const options = Object.entries(CARDS).map(([v, label]) => `<option value="${esc(v)}"${v === pm ? ' selected' : ''}>${esc(label)}</option>`).join('');
    return (
      `<h2>Payment method</h2><p>${esc(cardOf(pm))}</p>` +
      `<form method="post" action="${esc(`/p/session/${o.session.id}/card`)}"><label>New card <select name="payment_method">${options}</select></label> <button>Update card</button></form>`
    );
  }

  async function portalPage(reply: FastifyReply, o: Opened, note: { error?: string; done?: string } = {}) {
    const body = await core.read(o.session.account, async (ctx) => {
      const customer = (await findObject(ctx, o.customer.id, { type: 'customer' })) ?? o.customer;
      const fresh = { ...o, customer };
      const headline = o.config.business_profile.headline;
      return (
        `<h1>${esc(headline ?? 'Manage your subscription')}</h1><p class="muted">${esc(customer.data.email ?? customer.id)}</p>` +
        (note.error ? `<p class="err">${esc(note.error)}</p>` : note.done ? `<p>${esc(note.done)}</p>` : '') +
        (await subscriptionsHtml(ctx, fresh)) +
        cardHtml(fresh) +
        (await invoicesHtml(ctx, fresh)) +
        (o.session.data.return_url ? `<p><a href="${esc(o.session.data.return_url)}">Return</a></p>` : '')
      );
    });
    return send(reply, note.error ? 400 : 200, 'Customer portal', body);
  }

  const DONE: Record<string, string> = { card: 'Your card was updated.', cancel: 'Your subscription will be canceled at the end of the period.' };

  app.get<{ Params: { id: string }; Querystring: { done?: string } }>('/p/session/:id', async (req, reply) => {
    const o = await open(req.params.id);
    if (!o) return gone(reply);
    const done = DONE[String(req.query?.done ?? '')];
    return portalPage(reply, o, done ? { done } : {});
  });

  /** Runs a portal action on the session's account, delivers its events, and shows the page again. */
  async function act(reply: FastifyReply, id: string, action: string, fn: (ctx: Ctx, o: Opened, customer: Stored) => Promise<void>) {
    const o = await open(id);
    if (!o) return gone(reply);
    try {
      const { events } = await core.mutate({ account: o.session.account }, async (ctx) => fn(ctx, o, await getObject(ctx, o.customer.id, 'customer')));
      await core.deliverer.deliverEvents(events);
    } catch (err) {
      if (err instanceof StripeError) return portalPage(reply, o, { error: err.message });
      throw err;
    }
    return reply.redirect(`/p/session/${encodeURIComponent(id)}?done=${action}`, 303);
  }

  app.post<{ Params: { id: string }; Body: Record<string, unknown> }>('/p/session/:id/card', async (req, reply) => {
    const pm = String(req.body?.payment_method ?? '');
    return act(reply, req.params.id, 'card', async (ctx, o, customer) => {
      if (!o.config.features.payment_method_update.enabled) throw new StripeError(400, { type: 'invalid_request_error', message: 'This portal does not allow updating the payment method.' });
      if (!(pm in CARDS)) throw new StripeError(400, { type: 'invalid_request_error', message: 'Choose one of the test cards.' });
      await portalUpdateCard(ctx, customer, pm);
    });
  });

  app.post<{ Params: { id: string }; Body: Record<string, unknown> }>('/p/session/:id/cancel', async (req, reply) => {
    return act(reply, req.params.id, 'cancel', (ctx, o, customer) => portalCancel(ctx, o.config, customer, String(req.body?.subscription ?? '')));
  });
}
