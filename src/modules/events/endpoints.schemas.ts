import { Type, type Static } from '@sinclair/typebox';
import { DateTimeInput, Int64, PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';
import { SUBSCRIBABLE_TYPES } from './catalog/index.js';
import { MAX_ATTEMPTS } from './dispatcher.js';

export const ENDPOINT_URL_MAX = 2048;
export const ENDPOINT_DESCRIPTION_MAX = 500;
/** Every type, including types added later (Stripe's `enabled_events: ["*"]`). */
export const ALL_TYPES = '*';

const EventTypeName = Type.Union([Type.Literal(ALL_TYPES), ...SUBSCRIBABLE_TYPES.map((t) => Type.Literal(t))], {
  description: 'An event type of the catalog (the OpenAPI document\'s `webhooks`), or `*` for every type, including types added later.',
});
const Events = Type.Array(EventTypeName, { minItems: 1, maxItems: SUBSCRIBABLE_TYPES.length + 1, uniqueItems: true });

const Url = Type.String({
  maxLength: ENDPOINT_URL_MAX,
  description:
    'Where deliveries are POSTed: a public https URL (no user name or password, no private, loopback or link-local address, checked again after DNS resolution at every send). With the built-in processor simulator (development and tests), `http://127.0.0.1:PORT/…` is allowed too.',
});
const Description = Type.String({ maxLength: ENDPOINT_DESCRIPTION_MAX, description: 'What the endpoint is for, for you.' });

const endpointProps = {
  id: Uuid,
  url: Type.String({ maxLength: ENDPOINT_URL_MAX }),
  description: Type.Union([Type.String({ maxLength: ENDPOINT_DESCRIPTION_MAX }), Type.Null()]),
  events: Type.Array(Type.String({ maxLength: 64 }), { maxItems: SUBSCRIBABLE_TYPES.length + 1, description: 'The types sent to it; `["*"]`: every type.' }),
  enabled: Type.Boolean({ description: 'False: nothing is sent to it; its deliveries wait and go out when it is enabled again.' }),
  disabled_reason: Type.Union([Type.Literal('creator'), Type.Literal('gone'), Type.Literal('failing'), Type.Null()], {
    description: 'Why it is disabled: `creator` (you, with PATCH), `gone` (it answered 410), `failing` (no delivery succeeded for 5 days). Null while enabled.',
  }),
  failing_since: Type.Union([Timestamp, Type.Null()], { description: 'The first failed attempt since its last success; null while it succeeds. At 5 days it is disabled.' }),
  secret_rotated_at: Type.Union([Timestamp, Type.Null()], { description: 'When the secret was last rotated; the previous one signs beside it for 24 hours from then.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WebhookEndpoint = Type.Object(endpointProps, { $id: 'WebhookEndpoint', title: 'WebhookEndpoint' });
export const WebhookEndpointWithSecret = Type.Object(
  {
    ...endpointProps,
    secret: Type.Union([Type.String({ maxLength: 64, pattern: '^whsec_[A-Za-z0-9+/=]+$' }), Type.Null()], {
      description:
        'The signing secret (`whsec_…`), shown in this answer only: store it now. Verify deliveries with any Standard Webhooks library. A replay of this request\'s Idempotency-Key answers null here; rotate the secret if the first answer was lost.',
    }),
  },
  { title: 'WebhookEndpointWithSecret' },
);

export const CreateEndpointBody = Type.Object(
  { url: Url, events: Type.Optional(Events), description: Type.Optional(Description) },
  { additionalProperties: false },
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    enabled: Type.Optional(Type.Boolean({ description: 'False disables it (`disabled_reason: "creator"`); true enables it again, whoever disabled it, and what waited is sent.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

export const ListEndpointsQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });

const DELIVERY_STATUSES = ['pending', 'succeeded', 'dead'] as const;
const DeliveryStatus = Type.Union(
  DELIVERY_STATUSES.map((s) => Type.Literal(s)),
  { description: `pending: waiting for its next attempt; succeeded: a 2xx came back; dead: its last attempt (the ${MAX_ATTEMPTS}th, or a 410) failed. Retry one with POST …/retry, or every failed one since a time with POST …/recover.` },
);

export const Attempt = Type.Object({
  attempted_at: Timestamp,
  status_code: Type.Union([Int64({ minimum: 100, maximum: 599 }), Type.Null()], { description: 'The answer\'s HTTP status; null when none came (see `error`).' }),
  latency_ms: Int64({ minimum: 0, maximum: 3_600_000 }),
  response_body: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], { description: "The answer's first KB." }),
  error: Type.Union([Type.String({ maxLength: 500 }), Type.Null()], { description: 'Why no answer came: a timeout (15 s), a refused address, a connection error.' }),
});

const deliveryProps = {
  id: Uuid,
  event_id: Type.String({ maxLength: 36, description: 'The `webhook-id` header of every attempt: the same across retries and replays, to dedupe by.' }),
  event_type: Type.String({ maxLength: 64 }),
  status: DeliveryStatus,
  attempts: Int64({ minimum: 0, maximum: 1000 }),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When it is tried next (while pending).' }),
  last_attempt_at: Type.Union([Timestamp, Type.Null()]),
  last_status_code: Type.Union([Int64({ minimum: 100, maximum: 599 }), Type.Null()]),
  created_at: Timestamp,
};
export const WebhookDelivery = Type.Object(deliveryProps, { $id: 'WebhookDelivery', title: 'WebhookDelivery' });
export const WebhookDeliveryDetail = Type.Object(
  {
    ...deliveryProps,
    payload: Type.Object({}, { additionalProperties: true, description: 'The body every attempt sends: `{type, timestamp, data}`.' }),
    attempts_log: Type.Array(Attempt, { maxItems: 1000, description: 'Every attempt, oldest first.' }),
  },
  { title: 'WebhookDeliveryDetail' },
);

export const ListDeliveriesQuery = Type.Object(
  { ...PaginationQuery, status: Type.Optional(DeliveryStatus) },
  { additionalProperties: false },
);
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export const DeliveryParams = Type.Object({ id: Uuid, delivery_id: Uuid }, { additionalProperties: false });

export const RecoverBody = Type.Object(
  { since: DateTimeInput('Deliveries created at or after this time that are `dead` are queued again (at most 30 days back: older events are gone).') },
  { additionalProperties: false },
);

export const EventTypeInfo = Type.Object({ type: Type.String({ maxLength: 64 }), description: Type.String({ maxLength: 1000 }) }, { title: 'EventTypeInfo' });
