import { sql } from 'kysely';
import type { LineSpec } from './billing.js';
import { emit } from './events.js';
import { prorate } from './fees.js';
import type { Params } from './params.js';
import { getObject, insertObject, listObjects, newId, saveObject, tbl, type Ctx, type Stored } from './store.js';

const dateOf = (t: number) => new Date(t * 1000).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });

export interface ProrationInput {
  sub: any;
  oldPrice: any;
  newPrice: any;
  /** The moment of the change (proration_date). */
  at: number;
  /** Only the credit for the old price's unused time (a change of interval bills the new price in full). */
  creditOnly?: boolean;
}

/**
 * The two proration invoice items of a price change, to the second over the current period
 * [start, end): a credit for the unused time of the old price and a charge for the remaining
 * time at the new one, each rounded half up on its own (fees.ts prorate). They stay pending
 * until an invoice takes them: the change's own invoice (always_invoice) or the next renewal.
 */
export async function createProrationItems(ctx: Ctx, input: ProrationInput): Promise<Stored[]> {
  const { sub, oldPrice, newPrice, at } = input;
  const item = sub.items.data[0];
  const start = item.current_period_start as number;
  const end = item.current_period_end as number;
  const remaining = end - at;
  // The credit names the invoice line that billed the old price for this period, as Stripe's credited_items does.
  const latest = sub.latest_invoice ? await getObject(ctx, sub.latest_invoice, 'invoice', { param: 'subscription' }) : undefined;
  const paidLine = latest?.data.lines.data.find((l: any) => !l.parent?.subscription_item_details?.proration);
  const credited = latest && paidLine ? { invoice: latest.id, invoice_line_items: [paidLine.id] } : null;
  const lines = [
    { price: oldPrice, amount: -prorate(oldPrice.unit_amount, remaining, end - start), what: 'Unused time', credited },
    { price: newPrice, amount: prorate(newPrice.unit_amount, remaining, end - start), what: 'Remaining time', credited: null },
  ].slice(0, input.creditOnly ? 1 : 2);
  const out: Stored[] = [];
  for (const l of lines) {
    const product = await getObject(ctx, l.price.product, 'product', { param: 'items[0][price]' });
    const data = {
      id: newId('ii'),
      object: 'invoiceitem',
      amount: l.amount,
      currency: l.price.currency,
      customer: sub.customer,
      date: ctx.now,
      description: `${l.what} on ${product.data.name} after ${dateOf(at)}`,
      discountable: false,
      discounts: [],
      invoice: null as string | null,
      livemode: false,
      metadata: {},
      parent: { subscription_details: { subscription: sub.id, subscription_item: item.id }, type: 'subscription_details' },
      period: { end, start: at },
      pricing: { price_details: { price: l.price.id, product: l.price.product }, type: 'price_details', unit_amount_decimal: String(l.amount) },
      proration: true,
      proration_details: { credited_items: l.credited },
      quantity: 1,
      tax_rates: [],
      test_clock: null,
    };
    out.push(await insertObject(ctx, 'invoiceitem', data, { price: l.price }));
    await emit(ctx, 'invoiceitem.created', data);
  }
  return out;
}

/** The subscription's pending invoice items, now taken by invoice `invoiceId`, as its lines. */
export async function takePendingItems(ctx: Ctx, subId: string, invoiceId: string): Promise<LineSpec[]> {
  const rows = await tbl(ctx)
    .selectFrom('objects')
    .selectAll()
    .where('type', '=', 'invoiceitem')
    .where('account', '=', ctx.account)
    .where(sql`data #>> '{parent,subscription_details,subscription}'`, '=', subId)
    .where(sql`data ->> 'invoice'`, 'is', null)
    .orderBy('seq')
    .forUpdate()
    .execute();
  const lines: LineSpec[] = [];
  for (const row of rows) {
    const item: Stored = { id: row.id, type: row.type, account: row.account, created: Number(row.created), data: row.data, internal: row.internal ?? {} };
    item.data.invoice = invoiceId;
    await saveObject(ctx, item);
    const d = item.data;
    lines.push({ amount: d.amount, description: d.description, price: item.internal.price, start: d.period.start, end: d.period.end, invoiceItem: d.id, proration: true, credited: d.proration_details.credited_items });
  }
  return lines;
}

/** GET /v1/invoiceitems: `customer`, `invoice`, `pending=true` (not yet on an invoice). */
export function listInvoiceItems(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  for (const k of ['customer', 'invoice'] as const) {
    const v = p.str(k);
    if (v) where.push([[k], v]);
  }
  const pending = p.bool('pending');
  return listObjects(ctx, 'invoiceitem', p, {
    url: '/v1/invoiceitems',
    where,
    ...(pending !== undefined ? { filter: (d: any) => (d.invoice === null) === pending } : {}),
  });
}
