import { invalidRequest } from './errors.js';
import { changed, emit } from './events.js';
import { PENDING_UPDATE_JOB, reanchor, switchPrice } from './sub-period.js';
import { cancelJobs, findObject, getObject, saveObject, type Ctx, type Stored } from './store.js';

/**
 * The life of a `pending_update` (a price change with `payment_behavior: pending_if_incomplete`
 * whose invoice was declined, plan-change.ts): applied when its open invoice is paid before
 * `expires_at`, dropped at `expires_at` (the invoice is voided), or dropped when its invoice
 * is voided through the API. The subscription keeps `internal.pending_invoice`, that invoice's id.
 */

/** Whether `invoiceId` is the invoice a pending update of `sub` waits on. */
export const waitsOn = (sub: Stored, invoiceId: string): boolean => Boolean(sub.data.pending_update) && sub.internal.pending_invoice === invoiceId;

async function clearPending(ctx: Ctx, sub: Stored, event: string, apply: boolean): Promise<void> {
  const d = sub.data;
  const before = structuredClone(d);
  const anchor: number | null = d.pending_update.billing_cycle_anchor;
  if (apply) switchPrice(d, d.pending_update.subscription_items[0].price);
  // A change of interval resets the billing cycle to the moment it was asked for (its invoice billed that period).
  if (apply && anchor !== null) await reanchor(ctx, sub, anchor);
  d.pending_update = null;
  delete sub.internal.pending_invoice;
  await saveObject(ctx, sub);
  await cancelJobs(ctx, sub.id, [PENDING_UPDATE_JOB]);
  const prev = changed(before, d);
  if (event) await emit(ctx, event, d, prev);
  await emit(ctx, 'customer.subscription.updated', d, prev);
}

/** Its invoice was paid: the subscription takes the pending items (`…pending_update_applied`, `…updated`). */
export const applyPendingUpdate = (ctx: Ctx, sub: Stored): Promise<void> => clearPending(ctx, sub, 'customer.subscription.pending_update_applied', true);

/**
 * Voids an open invoice as Stripe does: `status: void`, `voided_at`, nothing more to collect,
 * its retries dropped, the customer's credit it used given back; `invoice.voided`.
 */
export async function voidOpenInvoice(ctx: Ctx, invoice: Stored): Promise<void> {
  const d = invoice.data;
  if (d.status !== 'open') throw invalidRequest(`You can only pass in open invoices. This invoice (${d.id}) is ${d.status}.`, 'invoice');
  d.status = 'void';
  d.status_transitions.voided_at = ctx.now;
  d.next_payment_attempt = null;
  await saveObject(ctx, invoice);
  await cancelJobs(ctx, invoice.id, ['invoice_retry']);
  const usedCredit = (d.ending_balance ?? 0) - (d.starting_balance ?? 0);
  if (usedCredit > 0) {
    const customer = await getObject(ctx, d.customer, 'customer', { param: 'customer' });
    const before = customer.data.balance;
    customer.data.balance -= usedCredit;
    await saveObject(ctx, customer);
    await emit(ctx, 'customer.updated', customer.data, { balance: before });
  }
  await emit(ctx, 'invoice.voided', d);
}

/** Job at a pending update's `expires_at`: its invoice is voided and the update dropped (`…pending_update_expired`). */
export async function expirePendingUpdate(ctx: Ctx, subId: string, payload: { invoice: string }): Promise<void> {
  const sub = await findObject(ctx, subId, { type: 'subscription', forUpdate: true });
  if (!sub || !waitsOn(sub, payload.invoice)) return;
  const invoice = await findObject(ctx, payload.invoice, { type: 'invoice', forUpdate: true });
  if (invoice?.data.status === 'open') await voidOpenInvoice(ctx, invoice);
  await clearPending(ctx, sub, 'customer.subscription.pending_update_expired', false);
}

/** POST /v1/invoices/{id}/void. Voiding the invoice a pending update waits on drops that update (`customer.subscription.updated`). */
export async function voidInvoice(ctx: Ctx, id: string): Promise<unknown> {
  const invoice = await getObject(ctx, id, 'invoice', { param: 'invoice' });
  await voidOpenInvoice(ctx, invoice);
  const subId = invoice.data.parent?.subscription_details?.subscription;
  const sub = subId ? await findObject(ctx, subId, { type: 'subscription', forUpdate: true }) : undefined;
  if (sub && waitsOn(sub, id)) await clearPending(ctx, sub, '', false);
  return invoice.data;
}
