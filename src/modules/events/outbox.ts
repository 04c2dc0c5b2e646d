import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { EventType } from './catalog/index.js';

/**
 * The outbox (migration 0027): events are written in the transaction of the change they
 * report, so a rolled-back change sends nothing and a committed one is always delivered
 * (dispatcher.ts sends what is due). An event is written only where one of the creator's
 * enabled endpoints wants its type, with one pending delivery per such endpoint, in one
 * statement: a creator without endpoints pays an index probe.
 */
export interface NewEvent {
  type: EventType;
  data: Record<string, unknown>;
}

/** An endpoint wants a type: enabled, and its filter is every type or names this one. */
export const WANTS = (endpoint: string, type: string) => `${endpoint}.enabled and (${endpoint}.event_types is null or ${type} = any(${endpoint}.event_types))`;


export async function recordEvents(trx: Executor, creatorId: string, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sql`with new_events as (
      insert into events (id, creator_id, type, data)
      select tribes_uuid_v7(), ${creatorId}::uuid, e.type, e.data
      from unnest(${events.map((e) => e.type)}::text[], ${events.map((e) => JSON.stringify(e.data))}::jsonb[]) with ordinality as e(type, data, n)
      where exists (select 1 from webhook_endpoints w where w.creator_id = ${creatorId}::uuid and ${sql.raw(WANTS('w', 'e.type'))})
      order by e.n
      returning id, type
    )
    insert into webhook_deliveries (id, creator_id, endpoint_id, event_id, event_type, next_attempt_at)
    select tribes_uuid_v7(), ${creatorId}::uuid, w.id, e.id, e.type, now()
    from new_events e join webhook_endpoints w on w.creator_id = ${creatorId}::uuid and ${sql.raw(WANTS('w', 'e.type'))}`.execute(trx);
}

/** One event to one endpoint, whatever its filter and state (a `ping` it asked for). */
export async function recordEventFor(trx: Executor, creatorId: string, endpointId: string, event: NewEvent): Promise<{ eventId: string; deliveryId: string }> {
  const { rows } = await sql<{ event_id: string; delivery_id: string }>`with new_event as (
      insert into events (id, creator_id, type, data) values (tribes_uuid_v7(), ${creatorId}::uuid, ${event.type}, ${JSON.stringify(event.data)}::jsonb)
      returning id
    )
    insert into webhook_deliveries (id, creator_id, endpoint_id, event_id, event_type, next_attempt_at)
    select tribes_uuid_v7(), ${creatorId}::uuid, ${endpointId}::uuid, e.id, ${event.type}, now() from new_event e
    returning event_id, id as delivery_id`.execute(trx);
  return { eventId: rows[0]!.event_id, deliveryId: rows[0]!.delivery_id };
}
