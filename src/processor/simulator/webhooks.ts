import crypto from 'node:crypto';
import { invalidRequest } from './errors.js';
import { DEFAULT_ENDPOINT, API_VERSION } from './events.js';
import type { Params } from './params.js';
import { deleteObject, getObject, insertObject, listObjects, newId, saveObject, type Ctx, type Env } from './store.js';

// ---- webhook_endpoint objects -------------------------------------------------------

export async function createWebhookEndpoint(ctx: Ctx, p: Params): Promise<unknown> {
  const url = p.reqStr('url');
  if (!/^https?:\/\//.test(url)) throw invalidRequest('Invalid URL: must be an http(s) URL.', 'url');
  const enabled = p.strList('enabled_events');
  if (!enabled?.length) throw invalidRequest('Missing required param: enabled_events.', 'enabled_events', 'parameter_missing');
  const secret = `whsec_${crypto.randomBytes(24).toString('base64url')}`;
  const data = {
    id: newId('we'),
    object: 'webhook_endpoint',
    api_version: p.str('api_version') ?? API_VERSION,
    application: null,
    created: ctx.now,
    description: p.str('description') ?? null,
    enabled_events: enabled,
    livemode: false,
    metadata: p.metadata(),
    status: 'enabled',
    url,
  };
  await insertObject(ctx, 'webhook_endpoint', data, { secret, connect: p.bool('connect') ?? false });
  // Stripe shows the signing secret only in the create response.
  return { ...data, secret };
}

export async function updateWebhookEndpoint(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const obj = await getObject(ctx, id, 'webhook_endpoint', { noun: 'webhook endpoint', param: 'id' });
  const url = p.str('url');
  if (url !== undefined) obj.data.url = url;
  const enabled = p.strList('enabled_events');
  if (enabled?.length) obj.data.enabled_events = enabled;
  const disabled = p.bool('disabled');
  if (disabled !== undefined) obj.data.status = disabled ? 'disabled' : 'enabled';
  if (p.has('description')) obj.data.description = p.str('description') || null;
  obj.data.metadata = p.metadata(obj.data.metadata);
  await saveObject(ctx, obj);
  return obj.data;
}

export async function retrieveWebhookEndpoint(ctx: Ctx, id: string): Promise<unknown> {
  return (await getObject(ctx, id, 'webhook_endpoint', { noun: 'webhook endpoint', param: 'id' })).data;
}

export async function deleteWebhookEndpoint(ctx: Ctx, id: string): Promise<unknown> {
  await getObject(ctx, id, 'webhook_endpoint', { noun: 'webhook endpoint', param: 'id' });
  await deleteObject(ctx, id);
  return { id, object: 'webhook_endpoint', deleted: true };
}

export const listWebhookEndpoints = (ctx: Ctx, p: Params) => listObjects(ctx, 'webhook_endpoint', p, { url: '/v1/webhook_endpoints' });

// ---- signing and delivery ------------------------------------------------------------

/** Stripe's scheme: `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<payload>")>`, t = real time. */
export function signPayload(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const v1 = crypto.createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

export const MAX_ATTEMPTS = 8;
const CLAIM_MS = 30_000;
const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * Sends events to their endpoints at least once. Each (event, endpoint) pair is a row in
 * `deliveries`; an attempt first claims its row with a conditional UPDATE, so the
 * synchronous first attempt and the background retrier never send the same attempt twice.
 * No transaction is held while a request is in flight (PGlite has a single connection
 * shared with the main app).
 */
export class Deliverer {
  private timer: NodeJS.Timeout | undefined;
  private readonly inflight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly env: Env) {}

  private get t() {
    return this.env.db.withSchema(this.env.schema);
  }

  start(): void {
    const every = Math.min(1000, Math.max(10, Math.floor(this.env.retryBaseDelayMs / 2)));
    this.timer = setInterval(() => void this.track(this.retryDue()), every);
    this.timer.unref();
  }

  /** Failures are logged, never thrown: delivery problems must not fail the API call. */
  private track(p: Promise<unknown>): Promise<void> {
    const guarded = p.then(
      () => undefined,
      (err: unknown) => {
        if (!this.closed) this.env.logger?.warn({ err }, 'webhook delivery pass failed');
      },
    );
    this.inflight.add(guarded);
    void guarded.finally(() => this.inflight.delete(guarded));
    return guarded;
  }

  /** First attempts for freshly emitted events, in emission order. */
  deliverEvents(eventIds: string[]): Promise<void> {
    return this.track(this.deliverInOrder(eventIds));
  }

  private async deliverInOrder(eventIds: string[]): Promise<void> {
    for (const eventId of eventIds) {
      if (this.closed) return;
      const rows = await this.t.selectFrom('deliveries').select('id').where('event_id', '=', eventId).where('status', '=', 'pending').where('attempts', '=', 0).execute();
      await Promise.all(rows.map((r: any) => this.attempt(Number(r.id))));
    }
  }

  private async retryDue(): Promise<void> {
    if (this.closed) return;
    const now = Date.now();
    const rows = await this.t
      .selectFrom('deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb: any) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .orderBy('id')
      .limit(20)
      .execute();
    await Promise.all(rows.map((r: any) => this.attempt(Number(r.id))));
  }

  private async attempt(id: number): Promise<void> {
    if (this.closed) return;
    const now = Date.now();
    const row = await this.t
      .updateTable('deliveries')
      .set({ claimed_until: now + CLAIM_MS })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where((eb: any) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .returningAll()
      .executeTakeFirst();
    if (!row) return;
    const target = await this.resolveTarget(row);
    if (!target) {
      await this.t.updateTable('deliveries').set({ status: 'canceled', claimed_until: null }).where('id', '=', id).execute();
      return;
    }
    const event = await this.t.selectFrom('events').select('data').where('id', '=', row.event_id).executeTakeFirstOrThrow();
    const payload = JSON.stringify(event.data, null, 2);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const res = await fetch(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signPayload(payload, target.secret), 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
        body: payload,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    if (this.closed) return;
    const attempts = Number(row.attempts) + 1;
    const ok = status !== null && status >= 200 && status < 300;
    // Exponential backoff from the configured base; give up after MAX_ATTEMPTS like Stripe
    // eventually does (Stripe: ~3 days; here: base × 2^7 after the first attempt).
    const next = Date.now() + this.env.retryBaseDelayMs * 2 ** (attempts - 1);
    await this.t
      .updateTable('deliveries')
      .set({
        attempts,
        status: ok ? 'succeeded' : attempts >= MAX_ATTEMPTS ? 'failed' : 'pending',
        next_attempt_at: next,
        claimed_until: null,
        last_status: status,
        last_error: error ?? (ok ? null : `HTTP ${status}`),
      })
      .where('id', '=', id)
      .execute();
    if (!ok) this.env.logger?.debug({ event: row.event_id, url: target.url, status, error, attempts }, 'webhook delivery failed');
  }

  private async resolveTarget(row: any): Promise<{ url: string; secret: string } | undefined> {
    if (row.endpoint_id === DEFAULT_ENDPOINT) {
      const url = this.env.webhookUrl ?? row.url;
      return { url, secret: this.env.webhookSecret };
    }
    const ep = await this.t.selectFrom('objects').select(['data', 'internal']).where('id', '=', row.endpoint_id).executeTakeFirst();
    if (!ep || ep.data.status !== 'enabled') return undefined;
    return { url: ep.data.url, secret: ep.internal.secret };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }
}
