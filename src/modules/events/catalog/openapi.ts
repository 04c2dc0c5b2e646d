import { Type } from '@sinclair/typebox';
import { CATALOG, CATALOG_VERSION } from './index.js';

/**
 * The catalog as the OpenAPI 3.1 document's `webhooks` section: one operation per type, its
 * body the Standard Webhooks envelope `{type, timestamp, data}` with the type's data schema.
 */
export function webhooksSection(): Record<string, unknown> {
  const section: Record<string, unknown> = {};
  for (const d of CATALOG) {
    const envelope = Type.Object(
      {
        type: Type.Literal(d.type),
        timestamp: Type.String({ format: 'date-time', maxLength: 64, description: 'When the change happened (the event was written), ISO 8601 UTC.' }),
        data: d.data,
      },
      { additionalProperties: false },
    );
    section[d.type] = {
      post: {
        operationId: `event_${d.type.replace(/[^a-z0-9]+/g, '_')}`,
        summary: d.type,
        description: `${d.description}\n\nSigned with Standard Webhooks headers (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`). Catalog version ${CATALOG_VERSION}.`,
        tags: ['Outgoing events'],
        security: [],
        requestBody: { required: true, content: { 'application/json': { schema: JSON.parse(JSON.stringify(envelope)) } } },
        responses: { '200': { description: 'Any 2xx within 15 s: received. Anything else is retried (410 disables the endpoint).' } },
      },
    };
  }
  return section;
}
