import { Type } from '@sinclair/typebox';
import { Int64, ProcessorId, Timestamp } from '../../http/schemas.js';

/** How much of a failed attempt's error the inbox keeps (in UTF-16 units, so at most as many characters). */
export const LAST_ERROR_MAX = 500;

/** A processor event as operators see it (no payload: it holds personal data). Registered at the root (app.ts) like every shared schema. */
export const WebhookEvent = Type.Object(
  {
    id: ProcessorId("The processor's event id."),
    type: Type.String(),
    account: Type.Union([ProcessorId(), Type.Null()], { description: 'The connected account the event is about.' }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('processed'), Type.Literal('dead')]),
    attempts: Int64(),
    last_error: Type.Union([Type.String({ maxLength: LAST_ERROR_MAX }), Type.Null()], { description: 'Why the last attempt failed.' }),
    received_at: Timestamp,
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When a pending event is tried next; null once processed or dead.' }),
    processed_at: Type.Union([Timestamp, Type.Null()]),
    dead_at: Type.Union([Timestamp, Type.Null()], { description: 'When the event was parked after its last allowed attempt.' }),
  },
  { $id: 'WebhookEvent', title: 'WebhookEvent' },
);
