import { invalidRequest, missingParam } from './errors.js';
import { changed, emit } from './events.js';
import type { Params } from './params.js';
import { findObject, getObject, insertObject, listObjects, newId, saveObject, type Ctx, type Stored } from './store.js';

// ---- products ------------------------------------------------------------------------

/** `p` is the request itself, or its `product_data` child when a price creates its product. */
function buildProduct(ctx: Ctx, p: Params, parent = ''): any {
  const name = p.str('name');
  if (!name) throw missingParam(parent ? `${parent}[name]` : 'name');
  return {
    id: p.str('id') || newId('prod', 14),
    object: 'product',
    active: p.bool('active') ?? true,
    created: ctx.now,
    default_price: null,
    description: p.str('description') || null,
    images: [],
    livemode: false,
    marketing_features: [],
    metadata: p.metadata(),
    name,
    package_dimensions: null,
    shippable: null,
    statement_descriptor: p.str('statement_descriptor') || null,
    tax_code: null,
    type: 'service',
    unit_label: p.str('unit_label') || null,
    updated: ctx.now,
    url: null,
  };
}

export async function createProduct(ctx: Ctx, p: Params): Promise<unknown> {
  const data = buildProduct(ctx, p);
  if (await findObject(ctx, data.id, { account: 'any' })) {
    throw invalidRequest(`Product already exists.`, 'id', 'resource_already_exists');
  }
  await insertObject(ctx, 'product', data);
  await emit(ctx, 'product.created', data);
  return data;
}

export async function getProduct(ctx: Ctx, id: string, param = 'id'): Promise<Stored> {
  return getObject(ctx, id, 'product', { param });
}

export async function updateProduct(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const prod = await getProduct(ctx, id);
  const before = structuredClone(prod.data);
  const d = prod.data;
  if (p.has('name')) d.name = p.reqStr('name');
  if (p.has('description')) d.description = p.str('description') || null;
  const active = p.bool('active');
  if (active !== undefined) d.active = active;
  if (p.has('default_price')) {
    const priceId = p.str('default_price');
    if (priceId) await getObject(ctx, priceId, 'price', { param: 'default_price' });
    d.default_price = priceId || null;
  }
  d.metadata = p.metadata(d.metadata);
  d.updated = ctx.now;
  await saveObject(ctx, prod);
  const prev = changed(before, d);
  delete prev.updated;
  if (Object.keys(prev).length) await emit(ctx, 'product.updated', d, { ...prev, updated: before.updated });
  return d;
}

export const listProducts = (ctx: Ctx, p: Params) => {
  const active = p.bool('active');
  return listObjects(ctx, 'product', p, { url: '/v1/products', ...(active !== undefined ? { where: [[['active'], String(active)]] } : {}) });
};

// ---- prices --------------------------------------------------------------------------

const INTERVALS = ['day', 'week', 'month', 'year'] as const;

export async function createPrice(ctx: Ctx, p: Params): Promise<unknown> {
  const currency = p.reqStr('currency').toLowerCase();
  const unitAmount = p.int('unit_amount', { min: 0 });
  if (unitAmount === undefined) throw missingParam('unit_amount');
  let productId = p.str('product');
  if (productId) {
    await getProduct(ctx, productId, 'product');
  } else if (p.has('product_data')) {
    const prod = buildProduct(ctx, p.child('product_data')!, 'product_data');
    await insertObject(ctx, 'product', prod);
    await emit(ctx, 'product.created', prod);
    productId = prod.id;
  } else {
    throw missingParam('product');
  }
  let recurring: any = null;
  if (p.has('recurring')) {
    const interval = p.enumOf('recurring[interval]', INTERVALS);
    if (!interval) throw missingParam('recurring[interval]');
    const count = p.int('recurring[interval_count]', { min: 1 }) ?? 1;
    // Stripe's cap: at most one year between bills.
    const maxCount = { day: 365, week: 52, month: 12, year: 1 }[interval];
    if (count > maxCount) throw invalidRequest(`Invalid recurring[interval_count]: at most one year (${maxCount} ${interval}s).`, 'recurring[interval_count]');
    recurring = { interval, interval_count: count, meter: null, trial_period_days: p.int('recurring[trial_period_days]') ?? null, usage_type: 'licensed' };
  }
  const data = {
    id: newId('price'),
    object: 'price',
    active: p.bool('active') ?? true,
    billing_scheme: 'per_unit',
    created: ctx.now,
    currency,
    custom_unit_amount: null,
    livemode: false,
    lookup_key: p.str('lookup_key') || null,
    metadata: p.metadata(),
    nickname: p.str('nickname') || null,
    product: productId,
    recurring,
    tax_behavior: p.str('tax_behavior') ?? 'unspecified',
    tiers_mode: null,
    transform_quantity: null,
    type: recurring ? 'recurring' : 'one_time',
    unit_amount: unitAmount,
    unit_amount_decimal: String(unitAmount),
  };
  await insertObject(ctx, 'price', data);
  await emit(ctx, 'price.created', data);
  return data;
}

export async function getPrice(ctx: Ctx, id: string, param = 'id'): Promise<Stored> {
  return getObject(ctx, id, 'price', { param });
}

export async function updatePrice(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const price = await getPrice(ctx, id);
  const before = structuredClone(price.data);
  const d = price.data;
  const active = p.bool('active');
  if (active !== undefined) d.active = active;
  if (p.has('nickname')) d.nickname = p.str('nickname') || null;
  if (p.has('lookup_key')) d.lookup_key = p.str('lookup_key') || null;
  d.metadata = p.metadata(d.metadata);
  await saveObject(ctx, price);
  const prev = changed(before, d);
  if (Object.keys(prev).length) await emit(ctx, 'price.updated', d, prev);
  return d;
}

export function listPrices(ctx: Ctx, p: Params) {
  const where: Array<[string[], string]> = [];
  const active = p.bool('active');
  if (active !== undefined) where.push([['active'], String(active)]);
  const product = p.str('product');
  if (product) where.push([['product'], product]);
  const currency = p.str('currency');
  if (currency) where.push([['currency'], currency.toLowerCase()]);
  const type = p.enumOf('type', ['one_time', 'recurring'] as const);
  if (type) where.push([['type'], type]);
  const lookupKeys = p.strList('lookup_keys');
  return listObjects(ctx, 'price', p, {
    url: '/v1/prices',
    where,
    ...(lookupKeys?.length ? { filter: (d: any) => lookupKeys.includes(d.lookup_key) } : {}),
  });
}
