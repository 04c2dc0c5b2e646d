import type { ColumnType } from 'kysely';
import type { NullableTimestamp, Timestamp } from './column-types.js';

/** Outgoing events (migration 0027): endpoints, the outbox, deliveries and their attempts. */

export type EndpointDisabledReason = 'creator' | 'gone' | 'failing';
export type DeliveryStatus = 'pending' | 'succeeded' | 'dead';

export interface WebhookEndpointsTable {
  id: string;
  creator_id: string;
  url: string;
  description: string | null;
  event_types: string[] | null;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  disabled_reason: EndpointDisabledReason | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: NullableTimestamp;
  failing_since: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EventsTable {
  id: string;
  creator_id: string;
  type: string;
  data: ColumnType<unknown, string, string>;
  created_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  creator_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  last_status_code: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  n: number;
  attempted_at: Timestamp;
  status_code: number | null;
  latency_ms: number;
  response_body: string | null;
  error: string | null;
}

export interface EventTables {
  webhook_endpoints: WebhookEndpointsTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
