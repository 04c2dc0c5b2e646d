import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { OPERATION_IDS } from './operation-ids.js';
import { UNLIMITED_PATHS } from './rate-limit.js';
import { corsScopeOf } from './cors.js';
import { requiredScope } from './auth.js';
import { DASHBOARD_CSRF_HEADER, DASHBOARD_CSRF_VALUE, DASHBOARD_SESSION_COOKIE } from './dashboard-session.js';

const DESCRIPTION = `The API of Tribes, paid fitness communities: the creator API (API keys), the member API used by the app (member tokens, under /api/v1/member), public discovery, and the operator API.

Conventions (the same on every route):
- Authenticate with \`Authorization: Bearer tribes_sk_...\`. Missing, malformed, unknown or revoked keys are 401 with \`WWW-Authenticate: Bearer\`. A creator key has a scope: \`full\`, or \`read\`, which may make GET requests only (any other is 403 \`insufficient_scope\`); each operation names the scope it needs.
- Success: \`{"success": true, "data": ...}\`; lists add \`pagination: {page, limit, total, pages}\` and take \`page\` (default 1) and \`limit\` (1-100, default 20).
- Errors: \`{"success": false, "error": {"code", "message", "details"?}}\` with a closed set of codes; \`details\` names each invalid field.
- Unknown body or query fields are rejected (400). Bodies are JSON (415 otherwise), at most 1 MiB (413).
- Another creator's resource is 404, exactly like one that does not exist.
- Every POST accepts \`Idempotency-Key\`: the same key and body within 24 h replays the first response byte for byte (with \`Idempotent-Replayed: true\`); another body is 409 \`idempotency_key_reused\`. The answer is stored in the same database transaction as the request's effect, so after any failure (a crash, a timeout, a 5xx) a retry with the same key either replays the answer or executes once. A request sent while another with the same key is still running waits for it and replays its answer. Routes that call the payment processor pass it a key derived from yours, so a retry never makes a second refund, payout, price, checkout session or account there. A 5xx stores nothing: retry it with the same key.
- Rate limit per creator, member or operator (per client address without a valid credential): 429 \`rate_limited\` with \`Retry-After\` (seconds).
- Money is integer cents in fields ending \`_cents\`. Ids are UUIDs: v7 (time-ordered), or for a row created by a keyed processor request, v8 derived from the key (so a retry creates the same row). Timestamps are ISO 8601 UTC.
- Every response carries \`X-Request-Id\` (yours, if you send a well-formed one).
- Browsers on other origins: off unless the operator lists origins in \`CORS_ORIGINS\`; then discovery and the member API (and the creator API with \`CORS_CREATOR_API=true\`) answer them with \`Access-Control-Allow-Origin\` and answer preflights. Credentials (cookies) are never allowed cross-origin: send the bearer token. The operator API never answers another origin.`;


const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
type Response = { $ref?: string; description?: string; headers?: Record<string, unknown> };
type Parameter = { in?: string; required?: boolean; schema?: { default?: unknown } };
type Operation = { operationId?: string; responses?: Record<string, Response>; security?: Record<string, string[]>[]; parameters?: Parameter[] };
type Document = {
  servers?: Record<string, unknown>[];
  paths?: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
  components?: { headers?: Record<string, unknown>; responses?: Record<string, unknown> };
};

const count = (description: string) => ({ description, schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2147483647 } });
/** The headers src/http/rate-limit.ts sends, as shared components. */
const HEADERS = {
  'X-RateLimit-Limit': count('Requests allowed per window to whoever this request was counted against (the creator, member, operator or client address).'),
  'X-RateLimit-Remaining': count('Requests left in the current window.'),
  'X-RateLimit-Reset': count('Seconds until the current window ends and the budget is whole again.'),
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 2147483647 } },
  'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string', const: 'Bearer' } },
  'Access-Control-Allow-Origin': {
    description:
      'Sent only when the server is configured for cross-origin browsers (`CORS_ORIGINS`) and the request came from an allowed origin: `*` or that origin. Discovery and the member API; the creator API when `CORS_CREATOR_API=true`; never the operator API or the processor webhook. Credentials are never allowed cross-origin.',
    schema: { type: 'string', maxLength: 2048, pattern: '^(\\*|https?://[^/\\s]+)$' },
  },
};
const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
const CORS_HEADERS = { 'Access-Control-Allow-Origin': headerRef('Access-Control-Allow-Origin') };
const RATE_LIMIT_HEADERS = { 'X-RateLimit-Limit': headerRef('X-RateLimit-Limit'), 'X-RateLimit-Remaining': headerRef('X-RateLimit-Remaining'), 'X-RateLimit-Reset': headerRef('X-RateLimit-Reset') };
const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const IDEMPOTENCY_CONFLICT =
  'The `Idempotency-Key` was used with another body (`idempotency_key_reused`), or the request that first sent it has not answered yet (`idempotency_key_in_use`, with `Retry-After`).';
const INSUFFICIENT_SCOPE = `The API key has scope \`read\`, which may make GET requests only (\`insufficient_scope\`): use a key with scope \`full\`. Or, with the dashboard session cookie, the request lacks \`Origin\` of this server or \`${DASHBOARD_CSRF_HEADER}: ${DASHBOARD_CSRF_VALUE}\` (\`csrf_failed\`).`;
const RESPONSES = {
  InsufficientScope: { headers: { ...RATE_LIMIT_HEADERS, ...CORS_HEADERS }, description: INSUFFICIENT_SCOPE, content: errorContent },
  TooManyRequests: {
    description: 'Rate limited (`rate_limited`); wait `Retry-After` seconds.',
    headers: { 'Retry-After': headerRef('Retry-After'), ...RATE_LIMIT_HEADERS, ...CORS_HEADERS },
    content: errorContent,
  },
  IdempotencyConflict: {
    headers: { 'Retry-After': headerRef('Retry-After'), ...RATE_LIMIT_HEADERS, ...CORS_HEADERS },
    description: IDEMPOTENCY_CONFLICT,
    content: errorContent,
  },
  PayloadTooLarge: { headers: { ...RATE_LIMIT_HEADERS, ...CORS_HEADERS }, description: 'The body is over 1 MiB (`payload_too_large`).', content: errorContent },
  UnsupportedMediaType: { headers: { ...RATE_LIMIT_HEADERS, ...CORS_HEADERS }, description: 'A body that is not `application/json` (`unsupported_media_type`).', content: errorContent },
  UriTooLong: { headers: { ...RATE_LIMIT_HEADERS, ...CORS_HEADERS }, description: 'A path segment is longer than the router accepts (`uri_too_long`); every id in this API is a 36-character UUID.', content: errorContent },
  InternalError: { headers: CORS_HEADERS, description: 'An unexpected failure (`internal_error`); the message never carries internals. Retry with the same Idempotency-Key.', content: errorContent },
};

/**
 * A creator-key operation: one that names the creatorKey scheme, or names none and so takes the
 * document's (creatorKey). Those naming none also take the dashboard's session cookie; those that
 * name creatorKey themselves take an API key only (the credential routes, requireApiKey).
 */
const takesCreatorKey = (operation: Operation): boolean => !operation.security || operation.security.some((s) => 'creatorKey' in s);

/**
 * The scope each creator-key operation needs, from the one rule the auth hook enforces
 * (requiredScope, src/http/auth.ts), as a role name of the creatorKey scheme (OpenAPI 3.1
 * allows them for any scheme); a write also declares the 403 a read key gets.
 */
function declareScope(method: string, operation: Operation, responses: Record<string, Response>): void {
  const scope = requiredScope(method.toUpperCase());
  // A session acts with scope full, so it needs no role; creatorKey stays first (test/security.test.ts reads it).
  operation.security = operation.security ? [{ creatorKey: [scope] }] : [{ creatorKey: [scope] }, { dashboardSession: [] }];
  if (scope !== 'full') return;
  const forbidden = responses['403'];
  if (!forbidden) responses['403'] = { $ref: '#/components/responses/InsufficientScope' };
  else if (!forbidden.$ref && !String(forbidden.description).includes('insufficient_scope')) forbidden.description = `${forbidden.description} Or: ${INSUFFICIENT_SCOPE}`;
}

/**
 * Applied once to the generated document: the explicit operation ids, each creator-key
 * operation's scope (and a write's 403 `insufficient_scope`), the rate-limit headers on
 * every answer of a counted route, `Retry-After` on every 429, `WWW-Authenticate` on every 401,
 * the shared 429 and 500 responses, 413 and 415 wherever a body can be sent (a body the
 * route does not take is still parsed, and refused, as JSON), and 414 on a path with an id.
 */
export function finishDocument(doc: Document): void {
  // The audience of the listed server (OWASP API9 inventory): the public API, not an internal one.
  for (const server of doc.servers ?? []) server['x-internal'] = false;
  doc.components = { ...doc.components, headers: HEADERS, responses: { ...doc.components?.responses, ...RESPONSES } };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const limited = !UNLIMITED_PATHS.has(path);
    const crossOrigin = corsScopeOf(path) !== 'never';
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const id = OPERATION_IDS[`${method.toUpperCase()} ${path}`];
      if (id) operation.operationId = id;
      // A query parameter with a default may be left out (validation fills it in), though the
      // schema generator lists every property of the query object as required.
      for (const p of operation.parameters ?? []) if (p.in === 'query' && p.schema?.default !== undefined) p.required = false;
      const responses = (operation.responses ??= {});
      if (takesCreatorKey(operation)) declareScope(method, operation, responses);
      // Every 429 is `rate_limited` with Retry-After (the general limit, sign-up's and login's alike).
      if (limited) responses['429'] = { $ref: '#/components/responses/TooManyRequests' };
      responses['500'] ??= { $ref: '#/components/responses/InternalError' };
      // Every POST takes an Idempotency-Key (src/http/idempotency.ts), so every POST can be 409.
      if (method === 'post') {
        const conflict = responses['409'];
        if (!conflict) responses['409'] = { $ref: '#/components/responses/IdempotencyConflict' };
        else if (!conflict.$ref && !String(conflict.description).includes('Idempotency-Key')) {
          conflict.description = `${conflict.description} Or: ${IDEMPOTENCY_CONFLICT}`;
          conflict.headers = { ...conflict.headers, 'Retry-After': headerRef('Retry-After') };
        }
      }
      if (method === 'post' || method === 'put' || method === 'patch' || method === 'delete') {
        responses['413'] ??= { $ref: '#/components/responses/PayloadTooLarge' };
        responses['415'] ??= { $ref: '#/components/responses/UnsupportedMediaType' };
      }
      if (path.includes('{')) responses['414'] ??= { $ref: '#/components/responses/UriTooLong' };
      for (const [status, response] of Object.entries(responses)) {
        if (response.$ref) continue;
        const headers = { ...response.headers };
        if (limited && /^[24]/.test(status)) Object.assign(headers, RATE_LIMIT_HEADERS);
        if (status === '429') headers['Retry-After'] = headerRef('Retry-After');
        if (status === '401') headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
        if (crossOrigin) Object.assign(headers, CORS_HEADERS);
        if (Object.keys(headers).length) response.headers = headers;
      }
    }
  }
}

/** OpenAPI 3.1 generated from the route schemas; the docs page is served from the package, offline. */
export async function registerOpenApi(app: FastifyInstance, { webhooks }: { webhooks?: Record<string, unknown> } = {}): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Tribes API', version: '1.0.0', description: DESCRIPTION, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
      servers: [{ url: 'http://127.0.0.1:3000', description: 'Local development' }],
      components: {
        securitySchemes: {
          creatorKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              'Creator API key, `tribes_sk_...`. Each key has a scope: `full` may call every creator operation; `read` only GET operations (any other request is 403 `insufficient_scope`), for dashboards and exports that should never change anything. Each operation names the scope it needs (`creatorKey: [read]` or `[full]`). Keys are created, listed and revoked under `/api/v1/api-keys`.',
          },
          dashboardSession: {
            type: 'apiKey',
            in: 'cookie',
            name: DASHBOARD_SESSION_COOKIE,
            description: `The dashboard's session, set as an \`HttpOnly; SameSite=Strict\` cookie when a sign-in link (\`POST /api/v1/dashboard/login-links\`) is opened. Acts for the creator with scope \`full\`; ends after 12 hours without use, 14 days after sign-in, or when signed out (\`DELETE /api/v1/dashboard/sessions/{id}\`). Read only when there is no \`Authorization\` header. A request other than GET and HEAD made with it must carry \`Origin\` of this server (or of its public URL) and \`${DASHBOARD_CSRF_HEADER}: ${DASHBOARD_CSRF_VALUE}\`, or it is 403 \`csrf_failed\`. It cannot create or revoke API keys or mint sign-in links (403 \`session_not_allowed\`).`,
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token (ADMIN_TOKEN or DATA_DIR/admin-token).' },
          memberToken: { type: 'http', scheme: 'bearer', description: 'Member token, `tribes_mt_...`, from member sign-up or login.' },
        },
      },
      security: [{ creatorKey: [] }],
      tags: [
        { name: 'Communities', description: 'A creator’s communities (tribes).' },
        { name: 'Account', description: "Your payment account at the processor: its state, onboarding, and the processor's dashboard (payout schedule)." },
        { name: 'Tiers', description: 'What a community sells; each tier is a product and recurring price at the processor.' },
        { name: 'Subscriptions', description: 'The mirror of processor subscriptions in the creator’s communities; cancel and refund.' },
        { name: 'Members', description: 'Member accounts (the app’s side): sign-up, login, tokens.' },
        { name: 'Member billing', description: 'Hosted checkout, the member’s own subscriptions (cancel and resume at period end), the processor’s billing portal, and the member’s payments.' },
        { name: 'Discovery', description: 'Public listing of active public communities and their tiers.' },
        { name: 'Webhooks', description: 'Events from the payment processor (signed).' },
        { name: 'Webhook endpoints', description: 'Outgoing events: your endpoints, their signing secrets and delivery log. The event types and their payloads are in `webhooks`.' },
        { name: 'Outgoing events', description: 'What Tribes POSTs to your webhook endpoints (Standard Webhooks 1.0).' },
        { name: 'Dashboard sessions', description: 'Signing in to the creator dashboard: one-time sign-in links, and the sessions they open (listed and signed out).' },
        { name: 'API keys', description: 'Your own API keys: create one (shown once) with scope `full` or `read`, list them, revoke them.' },
        { name: 'Admin', description: 'Operator API: creators, API keys, reconciliation.' },
        { name: 'Operations', description: 'Health, readiness.' },
      ],
    },
    // Shared schemas keep their $id as the component name instead of def-N.
    transformObject: (generated) => {
      const doc = 'openapiObject' in generated ? generated.openapiObject : generated.swaggerObject;
      finishDocument(doc as Document);
      // Outgoing events: what Tribes POSTs to the creator's endpoints (OpenAPI 3.1 `webhooks`).
      if (webhooks) (doc as Document & { webhooks?: unknown }).webhooks = webhooks;
      return doc;
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () => app.swagger());
}
