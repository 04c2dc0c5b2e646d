import { sessionLineItems } from './checkout.js';
import { invalidRequest } from './errors.js';
import { findObject, present, type Ctx } from './store.js';

/** Id prefixes the simulator issues, i.e. strings `expand[]` may replace by their object. */
const EXPANDABLE_PREFIX = /^(acct|prod|price|cus|cs_test|sub|si|in|ii|ch|pi|re|po|txn|fee|evt|we|bpc)_/;

/**
 * Stripe's `expand[]`: each dotted path names a field holding an id, replaced by the
 * object; `data.` reaches into list items, and deeper segments continue inside the
 * expanded object (`latest_invoice.payments`, `data.customer`). Stripe allows four levels.
 */
export async function expand(ctx: Ctx, value: any, paths: string[]): Promise<any> {
  for (const path of paths) {
    const parts = path.split('.');
    if (parts.length > 4) throw invalidRequest(`You cannot expand more than 4 levels of a property. Property: ${path}`, 'expand');
    value = await expandPath(ctx, value, parts, path);
  }
  return value;
}

async function expandPath(ctx: Ctx, value: any, parts: string[], full: string): Promise<any> {
  if (!parts.length || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Promise.all(value.map((v) => expandPath(ctx, v, parts, full)));
  const [head, ...rest] = parts as [string, ...string[]];
  const out = { ...value };
  if (head === 'line_items' && value.object === 'checkout.session' && !value.line_items) {
    const session = await findObject(ctx, value.id, { type: 'checkout.session', account: 'any' });
    out.line_items = session ? await sessionLineItems(ctx, session) : null;
    out.line_items = await expandPath(ctx, out.line_items, rest, full);
    return out;
  }
  if (!(head in value)) throw invalidRequest(`This property cannot be expanded (${full}).`, 'expand');
  const field = value[head];
  if (typeof field === 'string' && EXPANDABLE_PREFIX.test(field)) {
    const found = await findObject(ctx, field, { account: 'any' });
    out[head] = found ? await expandPath(ctx, present(ctx, found), rest, full) : field;
  } else if (field && typeof field === 'object') {
    out[head] = await expandPath(ctx, field, rest, full);
  } else if (field !== null && rest.length === 0 && typeof field !== 'string') {
    throw invalidRequest(`This property cannot be expanded (${full}).`, 'expand');
  }
  return out;
}
