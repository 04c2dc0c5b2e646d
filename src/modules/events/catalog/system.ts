import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid } from '../../../http/schemas.js';
import { defineEvent, EventData } from './define.js';

export const ping = defineEvent(
  'ping',
  'A test delivery you asked for (POST /api/v1/webhook-endpoints/{id}/test), sent to that endpoint only, whatever its event filter.',
  EventData('PingData', {
    endpoint_id: Uuid,
    message: Type.String({ maxLength: 200 }),
  }),
);

export const endpointDisabled = defineEvent(
  'webhook_endpoint.disabled',
  'One of your endpoints was disabled by Tribes: it answered 410 Gone, or every delivery to it failed for 5 days. Sent to your other endpoints that want it; the dashboard shows it too. Re-enable it with PATCH {"enabled": true}; what it missed meanwhile waits and is sent then.',
  EventData('WebhookEndpointDisabledData', {
    endpoint_id: Uuid,
    url: Type.String({ maxLength: 2048 }),
    reason: Type.Union([Type.Literal('gone'), Type.Literal('failing')], { description: 'gone: it answered 410; failing: no delivery succeeded for 5 days.' }),
    failing_since: Type.Union([Timestamp, Type.Null()]),
  }),
);
