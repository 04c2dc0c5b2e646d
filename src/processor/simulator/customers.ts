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
    applyCard(stored, pm);
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
  if (pm) applyCard(cus, pm);
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

/**
 * The customer's card on file becomes `paymentMethod`, and whether later charges pay follows
 * from it (a declining test card fails them with its decline code).
 */
export function applyCard(customer: Stored, paymentMethod: string): void {
  customer.data.invoice_settings.default_payment_method = paymentMethod;
  customer.internal.fail = isDeclining(paymentMethod);
  customer.internal.declineCode = customer.internal.fail ? declineCodeOf(paymentMethod) : undefined;
}

/**
 * The one way a card is swapped outside the customers API: the payment_behavior test helper
 * (`fail` picks pm_card_chargeDeclined or pm_card_visa) and the portal's Update card. Saves
 * the customer and emits `customer.updated` when the card changed.
 */
export async function setCard(ctx: Ctx, customer: Stored, paymentMethod: string): Promise<void> {
  const before = structuredClone(customer.data);
  applyCard(customer, paymentMethod);
  await saveObject(ctx, customer);
  const prev = changed(before, customer.data);
  if (Object.keys(prev).length) await emit(ctx, 'customer.updated', customer.data, prev);
}

/** The payment_behavior helper's card for `fail`. */
export const behaviorCard = (fail: boolean): string => (fail ? 'pm_card_chargeDeclined' : 'pm_card_visa');
