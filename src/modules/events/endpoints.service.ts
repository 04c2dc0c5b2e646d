import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, isoOrNull, type StoredAnswer } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import { CATALOG } from './catalog/index.js';
import { payloadOf } from './dispatcher.js';
import { endpointUrlProblem } from './endpoint-url.js';
import type { EndpointRow, EndpointsRepo } from './endpoints.repo.js';
import { ALL_TYPES, type CreateEndpointBody, type ListDeliveriesQuery, type UpdateEndpointBody } from './endpoints.schemas.js';
import { recordEventFor } from './outbox.js';
import { newEndpointSecret } from './signing.js';

/** Endpoints a creator may hold: Stripe allows 16; a few more for staging copies. */
export const MAX_ENDPOINTS = 20;
/** How long a rotated-out secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_HOURS = 24;
/** Events (with their deliveries and attempts) are kept this long, then purged. */
export const EVENT_RETENTION_DAYS = 30;

export function presentEndpoint(e: EndpointRow) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.event_types ?? [ALL_TYPES],
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    failing_since: isoOrNull(e.failing_since),
    secret_rotated_at: e.previous_secret_expires_at ? iso(new Date(new Date(e.previous_secret_expires_at).getTime() - PREVIOUS_SECRET_HOURS * 3600_000)) : null,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
  };
}
export type PresentedEndpoint = ReturnType<typeof presentEndpoint>;
export type EndpointWithSecret = PresentedEndpoint & { secret: string | null };
/** What the idempotency store keeps of an answer with a secret: all but the secret. */
export const withoutSecret = <T extends { secret: string | null }>(data: T): T => ({ ...data, secret: null });

type DeliveryRow = Awaited<ReturnType<EndpointsRepo['pageDeliveries']>>['rows'][number];
export const presentDelivery = (d: DeliveryRow) => ({
  id: d.id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.status === 'pending' ? isoOrNull(d.next_attempt_at) : null,
  last_attempt_at: isoOrNull(d.last_attempt_at),
  last_status_code: d.last_status_code,
  created_at: iso(d.created_at),
});

const invalid = (field: string, message: string) => new AppError('validation_error', `The endpoint is not valid: ${field} ${message}.`, [{ field, message }]);

/** `["*"]` (or nothing) is every type, stored as null; a list naming `*` among others is refused. */
function eventTypesOf(events: string[] | undefined): string[] | null {
  if (!events || (events.length === 1 && events[0] === ALL_TYPES)) return null;
  if (events.includes(ALL_TYPES)) throw invalid('events', 'must be either ["*"] or a list of types without "*"');
  return events;
}

/** The creator's webhook endpoints (DESIGN §9), their secrets and their delivery log. */
export function createEndpointsService({ db, endpoints, allowLoopback }: { db: Db; endpoints: EndpointsRepo; allowLoopback: boolean }) {
  const checkUrl = (url: string) => {
    const problem = endpointUrlProblem(url, allowLoopback);
    if (problem) throw invalid('url', problem);
    return new URL(url).href;
  };
  const load = async (creatorId: string, id: string, trx: Db | Parameters<EndpointsRepo['find']>[2] = db, lock = false) => {
    const row = await endpoints.find(creatorId, id, trx, { lock });
    if (!row) throw notFound('Webhook endpoint');
    return row;
  };

  return {
    eventTypes: () => CATALOG.map((d) => ({ type: d.type, description: d.description })),

    async list(creatorId: string, query: PageQuery) {
      const { rows, total } = await endpoints.page(creatorId, { limit: query.limit, offset: offsetOf(query) });
      return paginated(rows.map(presentEndpoint), total, query);
    },

    get: async (creatorId: string, id: string) => presentEndpoint(await load(creatorId, id)),

    async create(creatorId: string, input: CreateEndpointBody, answer?: StoredAnswer<EndpointWithSecret>): Promise<EndpointWithSecret> {
      const url = checkUrl(input.url);
      const eventTypes = eventTypesOf(input.events);
      return inTransaction(db, answer, async (trx) => {
        // Serializes a creator's creations, so two at once cannot both pass the cap.
        await trx.selectFrom('creators').select('id').where('id', '=', creatorId).forUpdate().executeTakeFirst();
        if ((await endpoints.count(creatorId, trx)) >= MAX_ENDPOINTS) {
          throw new AppError('endpoint_limit_reached', `You already have ${MAX_ENDPOINTS} webhook endpoints, the most allowed. Delete one you no longer use first (one endpoint can receive every event type).`);
        }
        const secret = newEndpointSecret();
        const row = await endpoints.insert({ id: newId(), creator_id: creatorId, url, description: input.description?.trim() || null, event_types: eventTypes, secret }, trx);
        return { ...presentEndpoint(row), secret };
      });
    },

    async update(creatorId: string, id: string, input: UpdateEndpointBody) {
      const url = input.url === undefined ? undefined : checkUrl(input.url);
      return inTransaction(db, undefined, async (trx) => {
        const current = await load(creatorId, id, trx, true);
        const enabling = input.enabled === true && !current.enabled;
        const row = await endpoints.update(
          creatorId,
          id,
          {
            ...(url !== undefined ? { url } : {}),
            ...(input.events !== undefined ? { event_types: eventTypesOf(input.events) } : {}),
            ...(input.description !== undefined ? { description: input.description?.trim() || null } : {}),
            ...(input.enabled === false && current.enabled ? { enabled: false, disabled_reason: 'creator' as const } : {}),
            // Enabled again: a fresh start, so one failure does not disable it at once.
            ...(enabling ? { enabled: true, disabled_reason: null, failing_since: null } : {}),
          },
          trx,
        );
        return presentEndpoint(row);
      });
    },

    async remove(creatorId: string, id: string) {
      const removed = await endpoints.remove(creatorId, id, db);
      if (!removed.numDeletedRows) throw notFound('Webhook endpoint');
      return { id, deleted: true as const };
    },

    /** A new secret, shown once; the previous one keeps signing beside it for 24 h (so receivers can switch without losing a delivery). */
    async rotateSecret(creatorId: string, id: string, answer?: StoredAnswer<EndpointWithSecret>): Promise<EndpointWithSecret> {
      return inTransaction(db, answer, async (trx) => {
        const current = await load(creatorId, id, trx, true);
        const secret = newEndpointSecret();
        const row = await endpoints.update(
          creatorId,
          id,
          { secret, previous_secret: current.secret, previous_secret_expires_at: new Date(Date.now() + PREVIOUS_SECRET_HOURS * 3600_000) },
          trx,
        );
        return { ...presentEndpoint(row), secret };
      });
    },

    /** A `ping` to this endpoint only, sent within a second like any delivery; its delivery is answered. */
    async test(creatorId: string, id: string, answer?: StoredAnswer<ReturnType<typeof presentDelivery>>) {
      return inTransaction(db, answer, async (trx) => {
        const endpoint = await load(creatorId, id, trx);
        if (!endpoint.enabled) throw new AppError('endpoint_disabled', 'This endpoint is disabled, so nothing is sent to it: enable it first (PATCH {"enabled": true}).');
        const { deliveryId } = await recordEventFor(trx, creatorId, id, { type: 'ping', data: { endpoint_id: id, message: 'A test delivery from Tribes.' } });
        const row = await endpoints.findDelivery(creatorId, id, deliveryId, trx);
        return presentDelivery(row!);
      });
    },

    async deliveries(creatorId: string, id: string, query: ListDeliveriesQuery) {
      await load(creatorId, id);
      const { rows, total } = await endpoints.pageDeliveries(creatorId, id, { status: query.status, limit: query.limit, offset: offsetOf(query) });
      return paginated(rows.map(presentDelivery), total, query);
    },

    async delivery(creatorId: string, id: string, deliveryId: string) {
      const row = await endpoints.findDelivery(creatorId, id, deliveryId);
      if (!row) throw notFound('Delivery');
      const attempts = await endpoints.attempts(deliveryId);
      return {
        ...presentDelivery(row),
        payload: JSON.parse(payloadOf(row.event_type, new Date(row.event_created_at), typeof row.data === 'string' ? JSON.parse(row.data) : row.data)) as Record<string, unknown>,
        attempts_log: attempts.map((a) => ({ attempted_at: iso(a.attempted_at), status_code: a.status_code, latency_ms: a.latency_ms, response_body: a.response_body, error: a.error })),
      };
    },

    /** Sends the delivery again now, whatever its state (same `webhook-id`: receivers that saw it can tell). */
    async retry(creatorId: string, id: string, deliveryId: string) {
      return inTransaction(db, undefined, async (trx) => {
        const row = await endpoints.requeue(creatorId, id, deliveryId, trx);
        if (!row) throw notFound('Delivery');
        return presentDelivery(row);
      });
    },

    /** Every dead delivery created since `since`, queued again (Svix's "recover"). */
    async recover(creatorId: string, id: string, since: string) {
      const from = new Date(since);
      return inTransaction(db, undefined, async (trx) => {
        await load(creatorId, id, trx);
        return { queued: await endpoints.requeueDead(creatorId, id, from, trx), since: iso(from) };
      });
    },
  };
}

export type EndpointsService = ReturnType<typeof createEndpointsService>;
