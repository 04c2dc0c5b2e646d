import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { answerInTransaction } from '../../http/idempotency.js';
import { authErrors, conflictError, errorResponse, IdParams, Int64, notFoundError, Ok, OkList, Timestamp, Uuid } from '../../http/schemas.js';
import { CATALOG_VERSION } from './catalog/index.js';
import {
  CreateEndpointBody,
  DeliveryParams,
  EventTypeInfo,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  RecoverBody,
  UpdateEndpointBody,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './endpoints.schemas.js';
import { MAX_ENDPOINTS, withoutSecret, type EndpointsService } from './endpoints.service.js';

const tags = ['Webhook endpoints'];
const EndpointRef = Type.Ref(WebhookEndpoint);
const DeliveryRef = Type.Ref(WebhookDelivery);
const invalidUrl = { 400: errorResponse('The body is not valid; `details` names each field (an endpoint URL must be public https).') };
const DELIVERY_NOTE = `Deliveries follow Standard Webhooks 1.0: headers \`webhook-id\` (the event's id, the same across retries), \`webhook-timestamp\` (seconds) and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of id.timestamp.body>\`, two space-separated while a rotated secret still signs); the body is \`{type, timestamp, data}\`. A 2xx answer within 15 s is a success; anything else is retried about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 24 h and 24 h later (±10%, or later if \`Retry-After\` asks), then the delivery is dead. 410 disables the endpoint at once, and so do 5 days without a success. Delivery is at least once (dedupe by \`webhook-id\`) and in no guaranteed order (a retry arrives after later events; order by \`timestamp\`). Catalog version ${CATALOG_VERSION}.`;

/** Outgoing events (DESIGN §9): the creator's endpoints, their secrets and delivery log. */
export function endpointsRoutes(service: EndpointsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/webhook-event-types',
      {
        schema: {
          tags,
          summary: 'List the event types',
          description: 'Every event type an endpoint can receive, with when it is sent. Each type\'s payload is in this document\'s `webhooks` section.',
          response: { 200: Ok(Type.Array(EventTypeInfo, { maxItems: 100 })), ...authErrors },
        },
      },
      async () => ({ success: true as const, data: service.eventTypes() }),
    );

    app.get(
      '/webhook-endpoints',
      {
        schema: { tags, summary: 'List your webhook endpoints', description: 'Newest first (creation time, then id). Secrets are never shown again.', querystring: ListEndpointsQuery, response: { 200: OkList(EndpointRef), ...authErrors } },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.post(
      '/webhook-endpoints',
      {
        schema: {
          tags,
          summary: 'Create a webhook endpoint',
          description: `Events of the types in \`events\` (default \`["*"]\`, every type) are delivered to \`url\` from now on. The signing secret is in this answer only. At most ${MAX_ENDPOINTS} endpoints (409 \`endpoint_limit_reached\`). ${DELIVERY_NOTE}`,
          body: CreateEndpointBody,
          response: { 201: Ok(WebhookEndpointWithSecret), ...authErrors, ...invalidUrl, ...conflictError(`You already have ${MAX_ENDPOINTS} endpoints (\`endpoint_limit_reached\`).`) },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.create(creatorOf(request), request.body, answerInTransaction(request, reply, withoutSecret)) }),
    );

    app.get(
      '/webhook-endpoints/:id',
      {
        schema: {
          tags,
          summary: 'Get a webhook endpoint',
          description: 'Its URL, event types, state (and why it is disabled), failing streak and last rotation. The secret is never shown again.',
          params: IdParams,
          response: { 200: Ok(EndpointRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.get(creatorOf(request), request.params.id) }),
    );

    app.patch(
      '/webhook-endpoints/:id',
      {
        schema: {
          tags,
          summary: 'Update a webhook endpoint',
          description: 'Changes its URL, event types, description, or turns it off and on. Enabling it again (whoever disabled it) clears its failing streak and sends what waited meanwhile.',
          params: IdParams,
          body: UpdateEndpointBody,
          response: { 200: Ok(EndpointRef), ...authErrors, ...invalidUrl, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.update(creatorOf(request), request.params.id, request.body) }),
    );

    app.delete(
      '/webhook-endpoints/:id',
      {
        schema: {
          tags,
          summary: 'Delete a webhook endpoint',
          description: 'Nothing more is sent to it, and its delivery log is deleted with it.',
          params: IdParams,
          response: { 200: Ok(Type.Object({ id: Uuid, deleted: Type.Literal(true) })), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.remove(creatorOf(request), request.params.id) }),
    );

    app.post(
      '/webhook-endpoints/:id/rotate-secret',
      {
        schema: {
          tags,
          summary: 'Rotate an endpoint\'s signing secret',
          description: 'A new secret, in this answer only. For 24 hours the previous secret signs too (two signatures in `webhook-signature`), so the receiver can switch to the new one without missing a delivery.',
          params: IdParams,
          response: { 200: Ok(WebhookEndpointWithSecret), ...authErrors, ...notFoundError },
        },
      },
      async (request, reply) => ({ success: true as const, data: await service.rotateSecret(creatorOf(request), request.params.id, answerInTransaction(request, reply, withoutSecret)) }),
    );

    app.post(
      '/webhook-endpoints/:id/test',
      {
        schema: {
          tags,
          summary: 'Send a test event',
          description: 'Sends a `ping` event to this endpoint only (whatever its event types), within about a second, signed like every delivery. The answer is its delivery: follow it in the delivery log.',
          params: IdParams,
          response: { 201: Ok(DeliveryRef), ...authErrors, ...notFoundError, ...conflictError('The endpoint is disabled (`endpoint_disabled`): enable it first.') },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.test(creatorOf(request), request.params.id, answerInTransaction(request, reply)) }),
    );

    app.get(
      '/webhook-endpoints/:id/deliveries',
      {
        schema: {
          tags,
          summary: 'List an endpoint\'s deliveries',
          description: 'Newest first (creation time, then id), optionally by status. Kept 30 days.',
          params: IdParams,
          querystring: ListDeliveriesQuery,
          response: { 200: OkList(DeliveryRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => service.deliveries(creatorOf(request), request.params.id, request.query),
    );

    app.get(
      '/webhook-endpoints/:id/deliveries/:delivery_id',
      {
        schema: {
          tags,
          summary: 'Get a delivery with its attempts',
          description: 'The body it sends, and every attempt: when, the HTTP status (or the error when no answer came), the time it took and the answer\'s first KB.',
          params: DeliveryParams,
          response: { 200: Ok(WebhookDeliveryDetail), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.delivery(creatorOf(request), request.params.id, request.params.delivery_id) }),
    );

    app.post(
      '/webhook-endpoints/:id/deliveries/:delivery_id/retry',
      {
        schema: {
          tags,
          summary: 'Send a delivery again',
          description: 'Queues the delivery for an attempt now, whatever its status (a succeeded one too: a replay). It keeps its `webhook-id`. If the endpoint is disabled, it waits for it.',
          params: DeliveryParams,
          response: { 200: Ok(DeliveryRef), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.retry(creatorOf(request), request.params.id, request.params.delivery_id) }),
    );

    app.post(
      '/webhook-endpoints/:id/recover',
      {
        schema: {
          tags,
          summary: 'Send every dead delivery since a time again',
          description: 'After an outage of the receiver: every delivery of this endpoint created at or after `since` whose attempts ran out is queued again now. Answers how many.',
          params: IdParams,
          body: RecoverBody,
          response: { 200: Ok(Type.Object({ queued: Int64({ minimum: 0, maximum: 10_000_000 }), since: Timestamp })), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.recover(creatorOf(request), request.params.id, request.body.since) }),
    );
  };
}
