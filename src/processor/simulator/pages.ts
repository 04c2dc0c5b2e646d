import type { FastifyInstance, FastifyReply } from 'fastify';
import { completeSession } from './checkout.js';
import type { Core } from './core.js';
import { StripeError } from './errors.js';
import { registerConnectPages } from './connect-pages.js';
import { registerPortalPages } from './portal-pages.js';
import { esc, money, page } from './html.js';
import { findObject, getObject, type Stored } from './store.js';

/**
 * Stand-ins for Stripe's hosted pages, so a person can click through the whole flow in a
 * browser: Checkout (a Pay button completing the session with pm_card_visa, and a
 * declining card for trying failures); Connect onboarding and the Express dashboard are in
 * connect-pages.ts, the customer portal in portal-pages.ts.
 */
export function registerPages(app: FastifyInstance, core: Core): void {
  const locate = (id: string, type: string) => core.read('', (ctx) => findObject(ctx, id, { type, account: 'any' }));

  async function checkoutPage(reply: FastifyReply, session: Stored, error?: string) {
    const s = session.data;
    const li = (session.internal.lineItems as Array<{ price: string }>)[0]!;
    const price = await locate(li.price, 'price');
    const product = price ? await locate(price.data.product, 'product') : undefined;
    const r = price?.data.recurring;
    const every = r ? (r.interval_count === 1 ? `per ${r.interval}` : `every ${r.interval_count} ${r.interval}s`) : '';
    const trial = session.internal.trialDays ? `<p>${esc(session.internal.trialDays)}-day free trial, then:</p>` : '';
    const body =
      s.status !== 'open'
        ? `<h1>Checkout ${esc(s.status)}</h1><p>This checkout can no longer be paid.</p>`
        : `<h1>${esc(product?.data.name ?? 'Subscription')}</h1>${trial}<p><strong>${esc(money(s.amount_total, s.currency))}</strong> ${esc(every)}</p>` +
          (error ? `<p class="err">${esc(error)}</p>` : '') +
          `<form method="post"><input type="hidden" name="payment_method" value="pm_card_visa"><button>Pay with test card 4242</button></form>` +
          `<form method="post"><input type="hidden" name="payment_method" value="pm_card_chargeDeclined"><button>Pay with a declining card</button></form>` +
          (s.cancel_url ? `<p><a href="${esc(s.cancel_url)}">Cancel</a></p>` : '');
    return reply.code(error ? 402 : 200).type('text/html; charset=utf-8').send(page('Checkout', body));
  }

  app.get<{ Params: { id: string } }>('/c/pay/:id', async (req, reply) => {
    const session = await locate(req.params.id, 'checkout.session');
    if (!session) return reply.code(404).type('text/html; charset=utf-8').send(page('Not found', '<h1>Checkout not found</h1>'));
    return checkoutPage(reply, session);
  });

  app.post<{ Params: { id: string }; Body: { payment_method?: string } }>('/c/pay/:id', async (req, reply) => {
    const located = await locate(req.params.id, 'checkout.session');
    if (!located) return reply.code(404).type('text/html; charset=utf-8').send(page('Not found', '<h1>Checkout not found</h1>'));
    const paymentMethod = req.body?.payment_method === 'pm_card_chargeDeclined' ? 'pm_card_chargeDeclined' : 'pm_card_visa';
    try {
      const { result, events } = await core.mutate({ account: located.account }, async (ctx) =>
        completeSession(ctx, await getObject(ctx, located.id, 'checkout.session'), { paymentMethod }),
      );
      await core.deliverer.deliverEvents(events);
      const session = result as { success_url: string };
      return reply.redirect(session.success_url.replace('{CHECKOUT_SESSION_ID}', located.id), 303);
    } catch (err) {
      if (err instanceof StripeError) return checkoutPage(reply, (await locate(located.id, 'checkout.session'))!, err.message);
      throw err;
    }
  });

  registerConnectPages(app, core);
  registerPortalPages(app, core);

  app.get<{ Params: { id: string } }>('/invoices/:id', async (req, reply) => {
    const invoice = await locate(req.params.id, 'invoice');
    if (!invoice) return reply.code(404).type('text/html; charset=utf-8').send(page('Not found', '<h1>Invoice not found</h1>'));
    const d = invoice.data;
    return reply.type('text/html; charset=utf-8').send(page(`Invoice ${d.number}`, `<h1>Invoice ${esc(d.number)}</h1><p>${esc(money(d.total, d.currency))} — ${esc(d.status)}</p>`));
  });

  app.get('/', async () => ({ object: 'processor_simulator', api_version: 'stripe-compatible', now: await core.now() }));
}
