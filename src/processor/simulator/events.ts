import { sql } from 'kysely';
import { noSuch } from './errors.js';
import type { Params } from './params.js';
import { newId, tbl, type Ctx, type ListEnvelope } from './store.js';

/** The API version the pinned SDK (stripe@23) speaks; events say which shape they carry. */
export const API_VERSION = '2026-10-28.endive';

/** Delivery target id for the configured default webhook URL (not a webhook_endpoint object). */
export const DEFAULT_ENDPOINT = 'default';

/**
 * First delivery attempts are made by whoever emitted the event, right after its
 * transaction commits; the background retrier only takes a delivery once this grace has
 * passed, so a first attempt is never made twice (it is the fallback if the process died
 * between commit and delivery).
 */
const FIRST_ATTEMPT_GRACE_MS = 10_000;

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** JSON with object keys sorted: jsonb hands stored objects back in its own key order. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );

/** Top-level fields that changed, with their old values: Stripe's `previous_attributes`. */
export function changed(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (canonical(before[key]) !== canonical(after[key])) out[key] = before[key] ?? null;
  }
  return out;
}

interface Target {
  endpointId: string;
  url: string;
}

function wants(enabled: unknown, type: string): boolean {
  if (!Array.isArray(enabled)) return true;
  return enabled.some((e) => e === '*' || e === type || (typeof e === 'string' && e.endsWith('.*') && type.startsWith(e.slice(0, -1))));
}

/**
 * Who receives an event: the configured default URL gets everything (it is the service's
 * single endpoint); webhook_endpoint objects follow Stripe's rule — a platform endpoint
 * created with `connect=true` receives connected-account events, one without receives the
 * platform's own — and their `enabled_events`.
 */
async function targetsFor(ctx: Ctx, type: string, account: string): Promise<Target[]> {
  const targets: Target[] = [];
  if (ctx.env.webhookUrl) targets.push({ endpointId: DEFAULT_ENDPOINT, url: ctx.env.webhookUrl });
  const endpoints = await tbl(ctx).selectFrom('objects').selectAll().where('type', '=', 'webhook_endpoint').where('account', 'in', ['', account]).execute();
  for (const e of endpoints) {
    if (e.data.status !== 'enabled' || !wants(e.data.enabled_events, type)) continue;
    const connect = Boolean(e.internal?.connect);
    const matches = e.account === '' ? (account === '' ? !connect : connect) : e.account === account;
    if (matches) targets.push({ endpointId: e.id, url: e.data.url });
  }
  return targets;
}

/** Records an event (and its pending deliveries) in the caller's transaction. */
export async function emit(
  ctx: Ctx,
  type: string,
  object: unknown,
  previous?: Record<string, unknown>,
  account = ctx.account,
): Promise<string> {
  const id = newId('evt');
  const targets = await targetsFor(ctx, type, account);
  const event = {
    id,
    object: 'event',
    ...(account ? { account } : {}),
    api_version: API_VERSION,
    created: ctx.now,
    data: { object: clone(object), ...(previous && Object.keys(previous).length ? { previous_attributes: clone(previous) } : {}) },
    livemode: false,
    pending_webhooks: targets.length,
    request: ctx.request,
    type,
  };
  await tbl(ctx).insertInto('events').values({ id, type, account, created: ctx.now, data: JSON.stringify(event) }).execute();
  const firstAttemptBy = Date.now() + FIRST_ATTEMPT_GRACE_MS;
  if (targets.length) {
    await tbl(ctx)
      .insertInto('deliveries')
      .values(targets.map((t) => ({ event_id: id, endpoint_id: t.endpointId, url: t.url, next_attempt_at: firstAttemptBy })))
      .execute();
  }
  ctx.events.push(id);
  return id;
}

async function withPendingCounts(ctx: Ctx, events: any[]): Promise<any[]> {
  if (!events.length) return events;
  const rows = await tbl(ctx)
    .selectFrom('deliveries')
    .select(['event_id', sql<number>`count(*)::int`.as('n')])
    .where('event_id', 'in', events.map((e) => e.id))
    .where('status', '=', 'pending')
    .groupBy('event_id')
    .execute();
  const pending = new Map(rows.map((r: any) => [r.event_id, Number(r.n)]));
  return events.map((e) => ({ ...e, pending_webhooks: pending.get(e.id) ?? 0 }));
}

export async function retrieveEvent(ctx: Ctx, id: string): Promise<unknown> {
  const row = await tbl(ctx).selectFrom('events').selectAll().where('id', '=', id).where('account', '=', ctx.account).executeTakeFirst();
  if (!row) throw noSuch('event', id, 'id');
  return (await withPendingCounts(ctx, [row.data]))[0];
}

/** GET /v1/events: the caller's account's events, newest first, filtered by type(s) and created. */
export async function listEvents(ctx: Ctx, p: Params): Promise<ListEnvelope> {
  const limit = p.int('limit', { min: 1, max: 100 }) ?? 10;
  let q = tbl(ctx).selectFrom('events').selectAll().where('account', '=', ctx.account);
  const type = p.str('type');
  if (type) q = type.endsWith('*') ? q.where('type', 'like', `${type.slice(0, -1)}%`) : q.where('type', '=', type);
  const types = p.strList('types');
  if (types?.length) q = q.where('type', 'in', types);
  for (const [k, op] of [['gt', '>'], ['gte', '>='], ['lt', '<'], ['lte', '<=']] as const) {
    const n = p.int(`created[${k}]`);
    if (n !== undefined) q = q.where('created', op, n);
  }
  const after = p.str('starting_after');
  if (after) {
    const cur = await tbl(ctx).selectFrom('events').select('seq').where('id', '=', after).executeTakeFirst();
    if (!cur) throw noSuch('event', after, 'starting_after');
    q = q.where('seq', '<', cur.seq);
  }
  const rows = await q.orderBy('seq', 'desc').limit(limit + 1).execute();
  const data = await withPendingCounts(ctx, rows.slice(0, limit).map((r: any) => r.data));
  return { object: 'list', data, has_more: rows.length > limit, url: '/v1/events' };
}
