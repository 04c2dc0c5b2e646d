import { changed, emit } from './events.js';
import type { Params } from './params.js';
import { getObject, insertObject, listObjects, newId, saveObject, type Ctx, type Stored } from './store.js';

/**
 * Customers live on the connected account (direct charges). Whether their card pays is
 * simulator state: `internal.fail` is set by the payment_behavior test helper or by paying
 * Checkout with a declining test card.
 */
export async function createCustomerRecord(
  ctx: Ctx,
  fields: { email?: string | null; name?: string | null; description?: string | null; phone?: string | null; metadata?: Record<string, string>; paymentMethod?: string | null },
): Promise<Stored> {
  const data = {
    id: newId('cus', 14),
    object: 'customer',
    address: null,
    balance: 0,
    created: ctx.now,
    currency: null,
    default_source: null,
    delinquent: false,
    description: fields.description ?? null,
    email: fields.email ?? null,
    invoice_prefix: newId('X', 6).slice(2).toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: fields.paymentMethod ?? null, footer: null, rendering_options: null },
    livemode: false,
    metadata: fields.metadata ?? {},
    name: fields.name ?? null,
    next_invoice_sequence: 1,
    phone: fields.phone ?? null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
  const stored = await insertObject(ctx, 'customer', data, { fail: false });
  await emit(ctx, 'customer.created', data);
  return stored;
}

export async function createCustomer(ctx: Ctx, p: Params): Promise<unknown> {
  const pm = p.str('payment_method') ?? null;
  const stored = await createCustomerRecord(ctx, {
    email: p.str('email') || null,
    name: p.str('name') || null,
    description: p.str('description') || null,
    phone: p.str('phone') || null,
    metadata: p.metadata(),
    paymentMethod: pm,
  });
  if (pm && isDeclining(pm)) {
    stored.internal.fail = true;
    await saveObject(ctx, stored);
  }
  return stored.data;
}

export async function getCustomer(ctx: Ctx, id: string, param = 'id'): Promise<Stored> {
  return getObject(ctx, id, 'customer', { param });
}

export async function updateCustomer(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const cus = await getCustomer(ctx, id);
  const before = structuredClone(cus.data);
  const d = cus.data;
  for (const k of ['email', 'name', 'description', 'phone'] as const) {
    if (p.has(k)) d[k] = p.str(k) || null;
  }
  const pm = p.str('invoice_settings[default_payment_method]');
  if (pm) {
    d.invoice_settings.default_payment_method = pm;
    cus.internal.fail = isDeclining(pm);
  }
  d.metadata = p.metadata(d.metadata);
  await saveObject(ctx, cus);
  const prev = changed(before, d);
  if (Object.keys(prev).length) await emit(ctx, 'customer.updated', d, prev);
  return d;
}

export function listCustomers(ctx: Ctx, p: Params) {
  const email = p.str('email');
  return listObjects(ctx, 'customer', p, { url: '/v1/customers', ...(email ? { where: [[['email'], email]] } : {}) });
}

/** Test cards that decline, by their test PaymentMethod token, with Stripe's decline codes. */
const DECLINES: Record<string, string> = {
  pm_card_chargeDeclined: 'generic_decline',
  pm_card_visa_chargeDeclined: 'generic_decline',
  pm_card_chargeDeclinedInsufficientFunds: 'insufficient_funds',
  pm_card_chargeDeclinedExpiredCard: 'expired_card',
  pm_card_chargeCustomerFail: 'generic_decline',
};

export const isDeclining = (pm: string): boolean => pm in DECLINES;
export const declineCodeOf = (pm: string | null | undefined): string => (pm && DECLINES[pm]) || 'generic_decline';

/** POST /v1/test_helpers/customers/{id}/payment_behavior: later charges fail or succeed. */
export function setPaymentBehavior(customer: Stored, fail: boolean): void {
  customer.internal.fail = fail;
  customer.internal.declineCode = fail ? 'generic_decline' : undefined;
}
