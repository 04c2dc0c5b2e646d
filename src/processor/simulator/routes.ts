import type { FastifyInstance } from 'fastify';
import * as accounts from './accounts.js';
import * as billing from './billing.js';
import * as catalog from './catalog.js';
import * as checkout from './checkout.js';
import type { Core } from './core.js';
import { cancelSchedule } from './schedule-cancel.js';
import * as customers from './customers.js';
import * as events from './events.js';
import * as money from './money.js';
import * as payouts from './payouts.js';
import * as pendingUpdate from './pending-update.js';
import * as portal from './portal.js';
import * as invoiceItems from './invoice-items.js';
import * as refunds from './refunds.js';
import * as schedules from './schedules.js';
import { apiRoute, type ApiHandler } from './server.js';
import { getObject, listObjects, present } from './store.js';
import * as subscriptions from './subscriptions.js';
import * as webhooks from './webhooks.js';

/** GET of one object of the caller's account. */
const retrieve =
  (type: string, noun?: string): ApiHandler =>
  async (ctx, _p, { id }) =>
    present(ctx, await getObject(ctx, id!, type, { param: 'id', ...(noun ? { noun } : {}) }));

/** The Stripe API surface the service uses, mapped onto the simulator's object modules. */
export function registerApiRoutes(app: FastifyInstance, core: Core): void {
  const r = (method: 'GET' | 'POST' | 'DELETE', url: string, handler: ApiHandler) => apiRoute(app, core, method, url, handler);

  r('POST', '/v1/accounts', (ctx, p) => accounts.createAccount(ctx, p));
  r('GET', '/v1/accounts', (ctx, p) => accounts.listAccounts(ctx, p));
  r('GET', '/v1/accounts/:id', (ctx, _p, { id }) => accounts.retrieveAccount(ctx, id));
  r('POST', '/v1/accounts/:id', (ctx, p, { id }) => accounts.updateAccount(ctx, id!, p));
  r('DELETE', '/v1/accounts/:id', (ctx, _p, { id }) => accounts.deleteAccount(ctx, id!));
  r('GET', '/v1/account', (ctx) => accounts.retrieveAccount(ctx, undefined));
  r('POST', '/v1/account_links', (ctx, p) => accounts.createAccountLink(ctx, p));
  r('POST', '/v1/accounts/:id/login_links', (ctx, _p, { id }) => accounts.createLoginLink(ctx, id!));

  r('POST', '/v1/products', (ctx, p) => catalog.createProduct(ctx, p));
  r('GET', '/v1/products', (ctx, p) => catalog.listProducts(ctx, p));
  r('GET', '/v1/products/:id', retrieve('product'));
  r('POST', '/v1/products/:id', (ctx, p, { id }) => catalog.updateProduct(ctx, id!, p));

  r('POST', '/v1/prices', (ctx, p) => catalog.createPrice(ctx, p));
  r('GET', '/v1/prices', (ctx, p) => catalog.listPrices(ctx, p));
  r('GET', '/v1/prices/:id', retrieve('price'));
  r('POST', '/v1/prices/:id', (ctx, p, { id }) => catalog.updatePrice(ctx, id!, p));

  r('POST', '/v1/customers', (ctx, p) => customers.createCustomer(ctx, p));
  r('GET', '/v1/customers', (ctx, p) => customers.listCustomers(ctx, p));
  r('GET', '/v1/customers/:id', retrieve('customer'));
  r('POST', '/v1/customers/:id', (ctx, p, { id }) => customers.updateCustomer(ctx, id!, p));

  r('POST', '/v1/checkout/sessions', (ctx, p) => checkout.createSession(ctx, p));
  r('GET', '/v1/checkout/sessions', (ctx, p) => checkout.listSessions(ctx, p));
  r('GET', '/v1/checkout/sessions/:id', retrieve('checkout.session', 'checkout.session'));
  r('GET', '/v1/checkout/sessions/:id/line_items', async (ctx, _p, { id }) =>
    checkout.sessionLineItems(ctx, await getObject(ctx, id!, 'checkout.session', { noun: 'checkout.session', param: 'session' })),
  );
  r('POST', '/v1/checkout/sessions/:id/expire', async (ctx, _p, { id }) =>
    checkout.expireSession(ctx, await getObject(ctx, id!, 'checkout.session', { noun: 'checkout.session', param: 'session' }), true),
  );

  r('GET', '/v1/subscriptions', (ctx, p) => subscriptions.listSubscriptions(ctx, p));
  r('GET', '/v1/subscriptions/:id', retrieve('subscription'));
  r('POST', '/v1/subscriptions/:id', (ctx, p, { id }) => subscriptions.updateSubscription(ctx, id!, p));
  r('DELETE', '/v1/subscriptions/:id', (ctx, p, { id }) => subscriptions.cancelSubscription(ctx, id!, p));

  r('GET', '/v1/invoices', (ctx, p) => billing.listInvoices(ctx, p));
  r('GET', '/v1/invoices/:id', retrieve('invoice'));
  r('POST', '/v1/invoices/:id/pay', (ctx, _p, { id }) => subscriptions.payOpenInvoice(ctx, id!));
  r('POST', '/v1/invoices/:id/void', (ctx, _p, { id }) => pendingUpdate.voidInvoice(ctx, id!));
  r('GET', '/v1/invoiceitems', (ctx, p) => invoiceItems.listInvoiceItems(ctx, p));
  r('GET', '/v1/invoiceitems/:id', retrieve('invoiceitem'));

  r('POST', '/v1/subscription_schedules', (ctx, p) => schedules.createSchedule(ctx, p));
  r('GET', '/v1/subscription_schedules', (ctx, p) => schedules.listSchedules(ctx, p));
  r('GET', '/v1/subscription_schedules/:id', retrieve('subscription_schedule', 'subscription_schedule'));
  r('POST', '/v1/subscription_schedules/:id', (ctx, p, { id }) => schedules.updateSchedule(ctx, id!, p));
  r('POST', '/v1/subscription_schedules/:id/release', (ctx, _p, { id }) => schedules.releaseSchedule(ctx, id!));
  r('POST', '/v1/subscription_schedules/:id/cancel', (ctx, _p, { id }) => cancelSchedule(ctx, id!));

  r('POST', '/v1/billing_portal/configurations', (ctx, p) => portal.createConfiguration(ctx, p));
  r('GET', '/v1/billing_portal/configurations', (ctx, p) => portal.listConfigurations(ctx, p));
  r('GET', '/v1/billing_portal/configurations/:id', (ctx, _p, { id }) => portal.retrieveConfiguration(ctx, id!));
  r('POST', '/v1/billing_portal/configurations/:id', (ctx, p, { id }) => portal.updateConfiguration(ctx, id!, p));
  r('POST', '/v1/billing_portal/sessions', (ctx, p) => portal.createPortalSession(ctx, p));

  r('GET', '/v1/invoice_payments', (ctx, p) => billing.listInvoicePayments(ctx, p));

  r('GET', '/v1/charges', (ctx, p) => money.listCharges(ctx, p));
  r('GET', '/v1/charges/:id', retrieve('charge'));
  r('GET', '/v1/payment_intents', (ctx, p) => money.listPaymentIntents(ctx, p));
  r('GET', '/v1/payment_intents/:id', retrieve('payment_intent', 'payment_intent'));
  r('GET', '/v1/application_fees', (ctx, p) => money.listApplicationFees(ctx, p));
  r('GET', '/v1/application_fees/:id', async (ctx, _p, { id }) => (await getObject(ctx, id!, 'application_fee', { account: '', param: 'id' })).data);

  r('POST', '/v1/refunds', (ctx, p) => refunds.createRefund(ctx, p));
  r('GET', '/v1/refunds', (ctx, p) => refunds.listRefunds(ctx, p));
  r('GET', '/v1/refunds/:id', retrieve('refund'));

  r('GET', '/v1/balance', (ctx) => money.retrieveBalance(ctx));
  r('GET', '/v1/balance_transactions', (ctx, p) => money.listBalanceTransactions(ctx, p));
  r('GET', '/v1/balance_transactions/:id', retrieve('balance_transaction', 'balance transaction'));

  r('POST', '/v1/payouts', (ctx, p) => payouts.createPayout(ctx, p));
  r('GET', '/v1/payouts', (ctx, p) => payouts.listPayouts(ctx, p));
  r('GET', '/v1/payouts/:id', retrieve('payout'));
  r('POST', '/v1/payouts/:id/cancel', (ctx, _p, { id }) => payouts.cancelPayout(ctx, id!));

  r('GET', '/v1/events', (ctx, p) => events.listEvents(ctx, p));
  r('GET', '/v1/events/:id', (ctx, _p, { id }) => events.retrieveEvent(ctx, id!));

  r('POST', '/v1/webhook_endpoints', (ctx, p) => webhooks.createWebhookEndpoint(ctx, p));
  r('GET', '/v1/webhook_endpoints', (ctx, p) => webhooks.listWebhookEndpoints(ctx, p));
  r('GET', '/v1/webhook_endpoints/:id', (ctx, _p, { id }) => webhooks.retrieveWebhookEndpoint(ctx, id!));
  r('POST', '/v1/webhook_endpoints/:id', (ctx, p, { id }) => webhooks.updateWebhookEndpoint(ctx, id!, p));
  r('DELETE', '/v1/webhook_endpoints/:id', (ctx, _p, { id }) => webhooks.deleteWebhookEndpoint(ctx, id!));

  // Subscription items: the service may read a subscription's item by id.
  r('GET', '/v1/subscription_items', (ctx, p) =>
    listObjects(ctx, 'subscription', p, { url: '/v1/subscription_items', where: [[['id'], p.reqStr('subscription')]] }).then((l) => ({
      ...l,
      data: l.data.flatMap((s: any) => s.items.data),
      url: '/v1/subscription_items',
    })),
  );
}
