import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

const DESCRIPTION = `The API of Tribes, paid fitness communities: the creator API (API keys), the member API used by the app (member tokens, under /api/v1/member), public discovery, and the operator API.

Conventions (the same on every route):
- Authenticate with \`Authorization: Bearer tribes_sk_...\`. Missing, malformed, unknown or revoked keys are 401 with \`WWW-Authenticate: Bearer\`.
- Success: \`{"success": true, "data": ...}\`; lists add \`pagination: {page, limit, total, pages}\` and take \`page\` (default 1) and \`limit\` (1-100, default 20).
- Errors: \`{"success": false, "error": {"code", "message", "details"?}}\` with a closed set of codes; \`details\` names each invalid field.
- Unknown body or query fields are rejected (400). Bodies are JSON (415 otherwise), at most 1 MiB (413).
- Another creator's resource is 404, exactly like one that does not exist.
- Every POST accepts \`Idempotency-Key\`: the same key and body within 24 h replays the first response byte for byte (with \`Idempotent-Replayed: true\`); another body is 409 \`idempotency_key_reused\`. The answer is stored in the same database transaction as the request's effect, so after any failure (a crash, a timeout, a 5xx) a retry with the same key either replays the answer or executes once. A request sent while another with the same key is still running waits for it and replays its answer. Routes that call the payment processor pass it a key derived from yours, so a retry never makes a second refund, payout, price, checkout session or account there. A 5xx stores nothing: retry it with the same key.
- Rate limit per creator, member or operator (per client address without a valid credential): 429 \`rate_limited\` with \`Retry-After\` (seconds).
- Money is integer cents in fields ending \`_cents\`. Ids are UUIDs: v7 (time-ordered), or for a row created by a keyed processor request, v8 derived from the key (so a retry creates the same row). Timestamps are ISO 8601 UTC.
- Every response carries \`X-Request-Id\` (yours, if you send a well-formed one).`;

/** OpenAPI 3.1 generated from the route schemas; the docs page is served from the package, offline. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Tribes API', version: '1.0.0', description: DESCRIPTION, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
      servers: [{ url: 'http://127.0.0.1:3000', description: 'Local development' }],
      components: {
        securitySchemes: {
          creatorKey: { type: 'http', scheme: 'bearer', description: 'Creator API key, `tribes_sk_...`.' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token (ADMIN_TOKEN or DATA_DIR/admin-token).' },
          memberToken: { type: 'http', scheme: 'bearer', description: 'Member token, `tribes_mt_...`, from member sign-up or login.' },
        },
      },
      security: [{ creatorKey: [] }],
      tags: [
        { name: 'Communities', description: 'A creator’s communities (tribes).' },
        { name: 'Tiers', description: 'What a community sells; each tier is a product and recurring price at the processor.' },
        { name: 'Subscriptions', description: 'The mirror of processor subscriptions in the creator’s communities; cancel and refund.' },
        { name: 'Members', description: 'Member accounts (the app’s side): sign-up, login, tokens.' },
        { name: 'Member billing', description: 'Hosted checkout and the member’s own subscriptions.' },
        { name: 'Discovery', description: 'Public listing of active public communities and their tiers.' },
        { name: 'Webhooks', description: 'Events from the payment processor (signed).' },
        { name: 'Admin', description: 'Operator API: creators, API keys, reconciliation.' },
        { name: 'Operations', description: 'Health, readiness.' },
      ],
    },
    // Shared schemas keep their $id as the component name instead of def-N.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () => app.swagger());
}
