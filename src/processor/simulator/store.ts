import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { noSuch } from './errors.js';
import type { Params } from './params.js';

/** Configuration and shared machinery of one running simulator. */
export interface Env {
  db: Kysely<any>;
  schema: string;
  /** http://host:port of the simulator itself, for hosted checkout/onboarding URLs. */
  baseUrl: string;
  webhookUrl: string | undefined;
  webhookSecret: string;
  retryBaseDelayMs: number;
  logger: Logger | undefined;
}

/**
 * Everything one unit of work needs: the transaction it runs in (never the bare pool —
 * on PGlite a second query outside the open transaction would wait for it forever), the
 * simulator time it happens at, the account it is scoped to ('' = platform) and the events
 * it emitted, which the caller delivers once the transaction has committed.
 */
export interface Ctx {
  env: Env;
  db: Kysely<any>;
  now: number;
  account: string;
  request: { id: string | null; idempotency_key: string | null };
  events: string[];
}

export interface Stored<T = any> {
  id: string;
  type: string;
  account: string;
  created: number;
  data: T;
  internal: Record<string, any>;
}

export interface ListEnvelope<T = unknown> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Stripe-looking ids: prefix, underscore, random base62 (24 chars: no collisions in practice). */
export function newId(prefix: string, length = 24): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (const b of bytes) out += BASE62[b % 62];
  return `${prefix}_${out}`;
}

export const tbl = (ctx: { env: Env; db: Kysely<any> }) => ctx.db.withSchema(ctx.env.schema);

// ---- clock ---------------------------------------------------------------------------

export const wallSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * The simulator time of `account` ('' or omitted: the shared clock). An account with its own
 * clock (account_clocks, set by a test helper) runs at the shared clock plus its offset.
 */
export async function readNow(db: Kysely<any>, schema: string, account = ''): Promise<number> {
  if (account === '') {
    const row = await db.withSchema(schema).selectFrom('clock').select('offset_seconds').where('id', '=', 1).executeTakeFirstOrThrow();
    return wallSeconds() + Number(row.offset_seconds);
  }
  const { rows } = await sql<{ offset: string }>`
    select c.offset_seconds + coalesce((select a.offset_seconds from ${sql.table(`${schema}.account_clocks`)} a where a.account = ${account}), 0) as offset
    from ${sql.table(`${schema}.clock`)} c where c.id = 1`.execute(db);
  return wallSeconds() + Number(rows[0]!.offset);
}

/** Sets the shared simulator clock to `t` by storing its offset from the wall clock. */
export async function writeNow(db: Kysely<any>, schema: string, t: number): Promise<void> {
  await db.withSchema(schema).updateTable('clock').set({ offset_seconds: t - wallSeconds() }).where('id', '=', 1).execute();
}

/** Sets `account`'s own clock to `t`: its offset from the shared clock, which goes on moving both. */
export async function writeAccountNow(db: Kysely<any>, schema: string, account: string, t: number): Promise<void> {
  const offset = t - (await readNow(db, schema));
  await db
    .withSchema(schema)
    .insertInto('account_clocks')
    .values({ account, offset_seconds: offset })
    .onConflict((oc) => oc.column('account').doUpdateSet({ offset_seconds: offset }))
    .execute();
}

/** Whether `account` runs on its own clock. */
export async function hasOwnClock(db: Kysely<any>, schema: string, account: string): Promise<boolean> {
  if (account === '') return false;
  return (await db.withSchema(schema).selectFrom('account_clocks').select('account').where('account', '=', account).executeTakeFirst()) !== undefined;
}

// ---- objects -------------------------------------------------------------------------

const fromRow = (r: any): Stored => ({
  id: r.id,
  type: r.type,
  account: r.account,
  created: Number(r.created),
  data: r.data,
  internal: r.internal ?? {},
});

/** Objects without a `created` field (invoice items have `date`) are stored as created now. */
export async function insertObject<T extends { id: string; created?: number }>(
  ctx: Ctx,
  type: string,
  data: T,
  internal: Record<string, any> = {},
  account = ctx.account,
): Promise<Stored<T>> {
  await tbl(ctx)
    .insertInto('objects')
    .values({ id: data.id, type, account, created: data.created ?? ctx.now, data: JSON.stringify(data), internal: JSON.stringify(internal) })
    .execute();
  return { id: data.id, type, account, created: data.created ?? ctx.now, data, internal };
}

export async function saveObject(ctx: Ctx, obj: Stored): Promise<void> {
  await tbl(ctx)
    .updateTable('objects')
    .set({ data: JSON.stringify(obj.data), internal: JSON.stringify(obj.internal) })
    .where('id', '=', obj.id)
    .execute();
}

export async function deleteObject(ctx: Ctx, id: string): Promise<void> {
  await tbl(ctx).deleteFrom('objects').where('id', '=', id).execute();
}

/**
 * Looks an object up by id. `account: 'any'` ignores scoping — the test helpers must find
 * a checkout session or payout whether or not the caller sent Stripe-Account.
 */
export async function findObject(
  ctx: { env: Env; db: Kysely<any>; account: string },
  id: string,
  opts: { type?: string; account?: string | 'any'; forUpdate?: boolean } = {},
): Promise<Stored | undefined> {
  let q = tbl(ctx).selectFrom('objects').selectAll().where('id', '=', id);
  if (opts.type) q = q.where('type', '=', opts.type);
  const account = opts.account ?? ctx.account;
  if (account !== 'any') q = q.where('account', '=', account);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Like findObject, but a miss is Stripe's 404 `No such <noun>: '<id>'`. */
export async function getObject(
  ctx: Ctx,
  id: string,
  type: string,
  opts: { noun?: string; param?: string; account?: string | 'any' } = {},
): Promise<Stored> {
  // Row-locked inside a transaction (the caller is about to change it); plain read otherwise.
  const found = await findObject(ctx, id, { type, account: opts.account ?? ctx.account, forUpdate: ctx.db.isTransaction });
  if (!found) throw noSuch(opts.noun ?? type.replace(/_/g, ' '), id, opts.param);
  return found;
}

export interface ListOptions {
  url: string;
  account?: string;
  /** Equality filters on the stored JSON: [['customer'], 'cus_1'] means data->>'customer' = 'cus_1'. */
  where?: Array<[string[], string]>;
  /** Extra predicate for filters that do not map to one JSON field. */
  filter?: (data: any) => boolean;
}

function createdFilter(p: Params): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const exact = p.get('created');
  if (typeof exact === 'string' || typeof exact === 'number') {
    const n = p.int('created')!;
    out.push(['=', n]);
  } else if (exact && typeof exact === 'object') {
    const ops: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };
    for (const [k, op] of Object.entries(ops)) {
      const n = p.int(`created[${k}]`);
      if (n !== undefined) out.push([op, n]);
    }
  }
  return out;
}

/** Stripe list semantics: newest first, `limit` 1..100 (default 10), `starting_after`/`ending_before` cursors. */
export async function listObjects(ctx: Ctx, type: string, p: Params, opts: ListOptions): Promise<ListEnvelope> {
  const limit = p.int('limit', { min: 1, max: 100 }) ?? 10;
  const account = opts.account ?? ctx.account;
  let q = tbl(ctx).selectFrom('objects').selectAll().where('type', '=', type).where('account', '=', account);
  for (const [path, value] of opts.where ?? []) {
    q = q.where(sql`data #>> ${sql.val(`{${path.join(',')}}`)}`, '=', value);
  }
  for (const [op, n] of createdFilter(p)) q = q.where('created', op as '=', n);
  const after = p.str('starting_after');
  const before = p.str('ending_before');
  const cursorSeq = async (id: string, param: string): Promise<number> => {
    const row = await tbl(ctx).selectFrom('objects').select('seq').where('id', '=', id).executeTakeFirst();
    if (!row) throw noSuch('object', id, param);
    return Number(row.seq);
  };
  if (after) q = q.where('seq', '<', await cursorSeq(after, 'starting_after'));
  if (before) q = q.where('seq', '>', await cursorSeq(before, 'ending_before'));
  q = q.orderBy('seq', before ? 'asc' : 'desc');
  // With a JS filter the page cannot be cut in SQL; simulator lists are small enough.
  const rows = (opts.filter ? await q.execute() : await q.limit(limit + 1).execute()).map(fromRow);
  let data = rows.map((r) => present(ctx, r));
  if (opts.filter) data = data.filter(opts.filter);
  const has_more = data.length > limit;
  data = data.slice(0, limit);
  if (before) data.reverse();
  return { object: 'list', data, has_more, url: opts.url };
}

/** The API view of a stored object: a few fields depend on the clock, not on stored state. */
export function present(ctx: { now: number }, obj: Stored): any {
  if (obj.type === 'balance_transaction') {
    return { ...obj.data, status: obj.data.available_on <= ctx.now ? 'available' : 'pending' };
  }
  return obj.data;
}

// ---- jobs ----------------------------------------------------------------------------

export async function scheduleJob(
  ctx: Ctx,
  kind: string,
  ref: string,
  dueAt: number,
  payload: Record<string, unknown> = {},
  account = ctx.account,
): Promise<void> {
  await tbl(ctx).insertInto('jobs').values({ kind, ref, due_at: dueAt, payload: JSON.stringify(payload), account }).execute();
}

export async function cancelJobs(ctx: Ctx, ref: string, kinds?: string[]): Promise<void> {
  let q = tbl(ctx).updateTable('jobs').set({ status: 'canceled' }).where('ref', '=', ref).where('status', '=', 'pending');
  if (kinds?.length) q = q.where('kind', 'in', kinds);
  await q.execute();
}
