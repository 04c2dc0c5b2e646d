import { sql } from 'kysely';
import type Stripe from 'stripe';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import type { Processor } from '../../processor/processor.js';
import { iso, type Executor } from '../../db/tx.js';
import { presentRefund, type RefundRow } from './present.js';
import { recordEvents } from '../events/outbox.js';

/** refund.created, in the transaction that inserted the refund's row (here, or the refund API's). */
export function recordRefundCreated(trx: Executor, creatorId: string, r: RefundRow) {
  const { id, ...refund } = presentRefund(r);
  return recordEvents(trx, creatorId, [{ type: 'refund.created', data: { refund_id: id, ...refund } }]);
}

type InvoiceWithLinks = Stripe.Invoice & {
  parent?: { subscription_details?: { subscription?: string | { id: string } | null } | null } | null;
  payments?: { data: Array<{ payment?: { payment_intent?: string | { id: string } | null } }> };
};

const idOf = (v: string | { id: string } | null | undefined) => (typeof v === 'string' ? v : v?.id);

type Line = { amount: number; pricing?: { price_details?: { price?: string | { id: string } | null } | null } | null; price?: { id: string } | null };

/**
 * The price an invoice charged for: its largest line — a renewal's only line, or beside an
 * upgrade's credit for unused time, the new price's charge.
 */
function chargedPrice(invoice: Stripe.Invoice): string | undefined {
  const lines = (invoice.lines?.data ?? []) as unknown as Line[];
  const top = lines.reduce<Line | undefined>((best, l) => (!best || l.amount > best.amount ? l : best), undefined);
  return idOf(top?.pricing?.price_details?.price) ?? top?.price?.id;
}

/**
 * Paid invoices and their refunds, mirrored so that a refund made anywhere — this API or
 * the processor's dashboard — shows up against its subscription. A payment row links the
 * processor's payment intent back to our subscription; refunds find their way through it.
 */
export function createPaymentsSync({ db, processor }: { db: Db; processor: Processor }) {
  /** Records a paid invoice of a mirrored subscription; true when it was new. */
  async function applyInvoice(trx: Executor, invoice: Stripe.Invoice): Promise<boolean> {
    const inv = invoice as InvoiceWithLinks;
    const subscriptionId = idOf(inv.parent?.subscription_details?.subscription);
    const paymentIntent = idOf(inv.payments?.data[0]?.payment?.payment_intent);
    if (invoice.status !== 'paid' || !subscriptionId || !paymentIntent || !invoice.id) return false;
    const sub = await trx.selectFrom('subscriptions').select(['id', 'creator_id', 'member_id']).where('processor_subscription_id', '=', subscriptionId).executeTakeFirst();
    if (!sub) return false;
    const price = chargedPrice(invoice);
    const tier = price
      ? await trx.selectFrom('tier_prices').select('tier_id').where('creator_id', '=', sub.creator_id).where('processor_price_id', '=', price).executeTakeFirst()
      : undefined;
    const inserted = await trx
      .insertInto('payments')
      .values({
        id: newId(),
        creator_id: sub.creator_id,
        subscription_id: sub.id,
        processor_invoice_id: invoice.id,
        processor_payment_intent_id: paymentIntent,
        tier_id: tier?.tier_id ?? null,
        amount_cents: invoice.amount_paid,
        currency: invoice.currency,
        paid_at: new Date((invoice.status_transitions?.paid_at ?? invoice.created) * 1000),
      })
      .onConflict((oc) => oc.column('processor_invoice_id').doNothing())
      .returning(['id', 'paid_at'])
      .executeTakeFirst();
    if (!inserted) return false;
    // Sent with the row, once: an invoice already mirrored inserts nothing.
    const fee = (invoice as { application_fee_amount?: number | null }).application_fee_amount ?? null;
    await recordEvents(trx, sub.creator_id, [
      {
        type: 'payment.succeeded',
        data: {
          payment_id: inserted.id,
          subscription_id: sub.id,
          member_id: sub.member_id,
          tier_id: tier?.tier_id ?? null,
          gross_cents: invoice.amount_paid,
          fee_cents: fee,
          net_cents: fee === null ? null : invoice.amount_paid - fee,
          currency: invoice.currency,
          processor_invoice_id: invoice.id,
          paid_at: iso(inserted.paid_at),
        },
      },
    ]);
    return true;
  }

  /**
   * payment.failed for a failed attempt to pay an invoice of a mirrored subscription. No row
   * keeps failed attempts: this runs in the effect of the processor's invoice.payment_failed,
   * which the inbox applies once per processor event (one event per failed attempt).
   */
  async function applyFailure(trx: Executor, invoice: Stripe.Invoice): Promise<void> {
    const subscriptionId = idOf((invoice as InvoiceWithLinks).parent?.subscription_details?.subscription);
    if (!subscriptionId || !invoice.id) return;
    const sub = await trx.selectFrom('subscriptions').select(['id', 'creator_id', 'member_id', 'tier_id']).where('processor_subscription_id', '=', subscriptionId).executeTakeFirst();
    if (!sub) return;
    await recordEvents(trx, sub.creator_id, [
      {
        type: 'payment.failed',
        data: {
          subscription_id: sub.id,
          member_id: sub.member_id,
          tier_id: sub.tier_id,
          amount_due_cents: invoice.amount_due,
          currency: invoice.currency,
          processor_invoice_id: invoice.id,
          attempt_count: invoice.attempt_count,
          next_payment_attempt: invoice.next_payment_attempt ? new Date(invoice.next_payment_attempt * 1000).toISOString() : null,
        },
      },
    ]);
  }

  /** Mirrors the refunds of one payment intent; returns how many were new. */
  async function applyRefunds(trx: Executor, paymentIntent: string, refunds: Stripe.Refund[]): Promise<number> {
    const payment = await trx
      .selectFrom('payments')
      .select(['creator_id', 'subscription_id'])
      .where('processor_payment_intent_id', '=', paymentIntent)
      .executeTakeFirst();
    if (!payment) return 0;
    let added = 0;
    for (const refund of refunds) {
      const row = await trx
        .insertInto('refunds')
        .values({
          id: newId(),
          creator_id: payment.creator_id,
          subscription_id: payment.subscription_id,
          amount_cents: refund.amount,
          currency: refund.currency,
          status: refund.status ?? 'succeeded',
          processor_refund_id: refund.id,
          processor_charge_id: idOf(refund.charge) ?? null,
          processor_payment_intent_id: paymentIntent,
          created_at: new Date(refund.created * 1000),
        })
        // The payment intent too: a refund the creator's API stored first does not know it (migrations/0023).
        .onConflict((oc) => oc.column('processor_refund_id').doUpdateSet({ status: refund.status ?? 'succeeded', processor_payment_intent_id: paymentIntent }))
        // xmax = 0 only on a freshly inserted row version: tells an insert from an update.
        .returning(['id', 'status', 'created_at', sql<boolean>`(xmax = 0)`.as('inserted')])
        .executeTakeFirst();
      if (!row?.inserted) continue;
      added++;
      await recordRefundCreated(trx, payment.creator_id, { ...row, subscription_id: payment.subscription_id, amount_cents: refund.amount, currency: refund.currency, processor_refund_id: refund.id });
    }
    return added;
  }

  return {
    applyInvoice,
    applyFailure,
    applyRefunds,
    /** Reads the refunds of a payment intent now (for charge.refunded); write with the returned effect. */
    async readRefunds(account: string, paymentIntent: string) {
      const refunds = (await processor.refundsOfPayment(account, paymentIntent)).data;
      return (trx: Executor) => applyRefunds(trx, paymentIntent, refunds);
    },
    /** Every paid invoice and refund of an account (reconciliation); returns what was new. */
    async reconcile(account: string) {
      let payments = 0;
      for await (const invoice of processor.paidInvoices(account)) {
        if (await db.transaction().execute((trx) => applyInvoice(trx, invoice))) payments++;
      }
      const byIntent = new Map<string, Stripe.Refund[]>();
      for await (const refund of processor.refunds(account)) {
        const pi = idOf(refund.payment_intent);
        if (pi) byIntent.set(pi, [...(byIntent.get(pi) ?? []), refund]);
      }
      let refunds = 0;
      for (const [pi, list] of byIntent) refunds += await db.transaction().execute((trx) => applyRefunds(trx, pi, list));
      return { payments, refunds };
    },
  };
}

export type PaymentsSync = ReturnType<typeof createPaymentsSync>;
