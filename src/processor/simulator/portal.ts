import { setCard } from './customers.js';
import { invalidRequest, missingParam } from './errors.js';
import { changed, emit } from './events.js';
import { Params } from './params.js';
import { findObject, getObject, insertObject, listObjects, newId, saveObject, tbl, type Ctx, type Stored } from './store.js';
import { waitsOn } from './pending-update.js';
import { cancelSubscription, payAgain, updateSubscription } from './subscriptions.js';

/** A portal session's URL works for an hour of simulator time. */
export const PORTAL_SESSION_SECONDS = 3600;

const CONFIG_NOUN = 'billing_portal.configuration';

const NO_DEFAULT_CONFIGURATION =
  'No configuration provided and your test mode default configuration has not been created. Provide a configuration or create your default by saving your customer portal settings in test mode at https://dashboard.stripe.com/test/settings/billing/portal.';

/** Applies the configuration parameters the simulator's portal acts on (create and update). */
function applyConfiguration(d: any, p: Params): void {
  const bool = (name: string, current: boolean) => p.bool(name) ?? current;
  const f = d.features;
  f.payment_method_update.enabled = bool('features[payment_method_update][enabled]', f.payment_method_update.enabled);
  f.invoice_history.enabled = bool('features[invoice_history][enabled]', f.invoice_history.enabled);
  f.customer_update.enabled = bool('features[customer_update][enabled]', f.customer_update.enabled);
  f.subscription_cancel.enabled = bool('features[subscription_cancel][enabled]', f.subscription_cancel.enabled);
  f.subscription_cancel.mode = p.enumOf('features[subscription_cancel][mode]', ['at_period_end', 'immediately'] as const) ?? f.subscription_cancel.mode;
  if (p.bool('features[subscription_update][enabled]')) {
    throw invalidRequest('The simulator\'s portal does not offer plan changes; change prices with POST /v1/subscriptions/{id} instead.', 'features[subscription_update][enabled]');
  }
  for (const k of ['headline', 'privacy_policy_url', 'terms_of_service_url'] as const) {
    if (p.has(`business_profile[${k}]`)) d.business_profile[k] = p.str(`business_profile[${k}]`) || null;
  }
  if (p.has('default_return_url')) d.default_return_url = p.str('default_return_url') || null;
  if (p.has('name')) d.name = p.str('name') || null;
  d.active = p.bool('active') ?? d.active;
  d.metadata = p.metadata(d.metadata);
}

/** POST /v1/billing_portal/configurations: the account's first one is its default. */
export async function createConfiguration(ctx: Ctx, p: Params): Promise<unknown> {
  if (!p.has('features')) throw missingParam('features');
  const existing = await tbl(ctx).selectFrom('objects').select('id').where('type', '=', CONFIG_NOUN).where('account', '=', ctx.account).executeTakeFirst();
  const data = {
    id: newId('bpc'),
    object: CONFIG_NOUN,
    active: true,
    application: null,
    business_profile: { headline: null as string | null, privacy_policy_url: null as string | null, terms_of_service_url: null as string | null },
    created: ctx.now,
    default_return_url: null as string | null,
    features: {
      customer_update: { allowed_updates: [], enabled: false },
      invoice_history: { enabled: false },
      payment_method_update: { enabled: false },
      subscription_cancel: { cancellation_reason: { enabled: false, options: [] }, enabled: false, mode: 'at_period_end', proration_behavior: 'none' },
      subscription_update: { default_allowed_updates: [], enabled: false, products: [], proration_behavior: 'none', schedule_at_period_end: { conditions: [] } },
    },
    is_default: existing === undefined,
    livemode: false,
    login_page: { enabled: false, url: null },
    metadata: {},
    name: null as string | null,
    updated: ctx.now,
  };
  applyConfiguration(data, p);
  await insertObject(ctx, CONFIG_NOUN, data);
  await emit(ctx, 'billing_portal.configuration.created', data);
  return data;
}

export async function updateConfiguration(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const config = await getObject(ctx, id, CONFIG_NOUN, { noun: CONFIG_NOUN, param: 'configuration' });
  const before = structuredClone(config.data);
  applyConfiguration(config.data, p);
  config.data.updated = ctx.now;
  await saveObject(ctx, config);
  await emit(ctx, 'billing_portal.configuration.updated', config.data, changed(before, config.data));
  return config.data;
}

export function listConfigurations(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  for (const k of ['active', 'is_default'] as const) {
    const v = p.bool(k);
    if (v !== undefined) where.push([[k], String(v)]);
  }
  return listObjects(ctx, CONFIG_NOUN, p, { url: '/v1/billing_portal/configurations', where });
}

export const retrieveConfiguration = async (ctx: Ctx, id: string) => (await getObject(ctx, id, CONFIG_NOUN, { noun: CONFIG_NOUN, param: 'configuration' })).data;

/** POST /v1/billing_portal/sessions `{customer, return_url, configuration?}` on the caller's account. */
export async function createPortalSession(ctx: Ctx, p: Params): Promise<unknown> {
  const customer = await getObject(ctx, p.reqStr('customer'), 'customer', { param: 'customer' });
  const configId = p.str('configuration');
  let config: Stored | undefined;
  if (configId) {
    config = await getObject(ctx, configId, CONFIG_NOUN, { noun: CONFIG_NOUN, param: 'configuration' });
    if (!config.data.active) throw invalidRequest(`The configuration ${configId} is not active.`, 'configuration');
  } else {
    const row = await listObjects(ctx, CONFIG_NOUN, new Params({ limit: 1 }), { url: '', where: [[['is_default'], 'true']] });
    if (!row.data[0]) throw invalidRequest(NO_DEFAULT_CONFIGURATION);
    config = await getObject(ctx, (row.data[0] as any).id, CONFIG_NOUN, { noun: CONFIG_NOUN });
  }
  const returnUrl = p.str('return_url') || config.data.default_return_url;
  const id = newId('bps');
  const data = {
    id,
    object: 'billing_portal.session',
    configuration: config.id,
    created: ctx.now,
    customer: customer.id,
    customer_account: null,
    flow: null,
    livemode: false,
    locale: p.str('locale') ?? null,
    on_behalf_of: null,
    return_url: returnUrl ?? null,
    url: `${ctx.env.baseUrl}/p/session/${id}`,
  };
  await insertObject(ctx, 'billing_portal.session', data, { expires_at: ctx.now + PORTAL_SESSION_SECONDS });
  await emit(ctx, 'billing_portal.session.created', data);
  return data;
}

/**
 * The portal's Update card: the card is set as the payment_behavior helper sets it, then, as
 * Stripe does when a customer adds a new default payment method, every open invoice of a
 * past_due subscription is retried at once (oldest first), and the open invoice a pending update
 * waits on (paid: the update is applied).
 */
export async function portalUpdateCard(ctx: Ctx, customer: Stored, paymentMethod: string): Promise<void> {
  await setCard(ctx, customer, paymentMethod);
  const open = await listObjects(ctx, 'invoice', new Params({ limit: 100 }), { url: '', where: [[['customer'], customer.id], [['status'], 'open']] });
  for (const inv of [...open.data].reverse() as any[]) {
    const subId = inv.parent?.subscription_details?.subscription;
    const sub = subId ? await findObject(ctx, subId, { type: 'subscription', forUpdate: true }) : undefined;
    // A past_due subscription's invoice, or the one a pending update waits on (pending_if_incomplete).
    if (!sub || (sub.data.status !== 'past_due' && !waitsOn(sub, inv.id))) continue;
    const invoice = await getObject(ctx, inv.id, 'invoice');
    await payAgain(ctx, invoice, sub, customer, invoice.data.next_payment_attempt);
  }
}

/** The portal's Cancel, through the same functions as the API, as the configuration's mode says. */
export async function portalCancel(ctx: Ctx, config: any, customer: Stored, subId: string): Promise<void> {
  const sub = await getObject(ctx, subId, 'subscription', { param: 'subscription' });
  if (sub.data.customer !== customer.id || !config.features.subscription_cancel.enabled) throw invalidRequest('This subscription cannot be canceled from this portal.');
  if (config.features.subscription_cancel.mode === 'immediately') await cancelSubscription(ctx, subId, new Params({}));
  else await updateSubscription(ctx, subId, new Params({ cancel_at_period_end: true }));
}
