import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { CorsConfig } from '../config.js';

/**
 * Cross-origin reads (CORS), as a setting. Off by default: with `CORS_ORIGINS` unset no CORS
 * header is ever sent and a preflight is a 404, as on any unknown route. When set, the
 * discovery and member APIs answer browsers on the listed origins (a creator's own web page
 * listing the tribe, a browser member app), and the creator API too when `CORS_CREATOR_API`
 * says so (a creator's own single-page tool holding its key). The operator API and the
 * processor's webhook endpoint never answer another origin.
 *
 * Credentials (cookies) are never allowed cross-origin: every API here authenticates with a
 * bearer token the page sends itself, so `Access-Control-Allow-Credentials` is never sent,
 * with a wildcard or without.
 */
export type CorsScope = 'public' | 'creator' | 'never';

/** Which kind of route a path is, for CORS: the OpenAPI document and the server both ask this. */
export function corsScopeOf(path: string): CorsScope {
  if (path.startsWith('/api/v1/discover/') || path.startsWith('/api/v1/member/')) return 'public';
  if (path.startsWith('/api/v1/admin/') || path.startsWith('/api/v1/webhooks/')) return 'never';
  if (path.startsWith('/api/v1/')) return 'creator';
  return 'never';
}

// What a browser may send and read. Retry-After and the rate-limit headers are not
// CORS-safelisted, and a client needs them to back off; X-Request-Id to report a failure.
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'];
const EXPOSED_HEADERS = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed', 'WWW-Authenticate'];
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE'];
// Browsers cache a preflight this long (Chromium caps it at 2 hours).
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export async function registerCors(app: FastifyInstance, config: CorsConfig): Promise<void> {
  if (config.origins.length === 0) return;
  const origin = config.origins.includes('*') ? '*' : config.origins;
  const open = { origin, credentials: false, methods: METHODS, allowedHeaders: ALLOWED_HEADERS, exposedHeaders: EXPOSED_HEADERS, maxAge: PREFLIGHT_MAX_AGE_SECONDS, strictPreflight: true };
  await app.register(cors, {
    // Per request: the route's scope decides. `origin: false` sends nothing, and a preflight
    // to such a path falls through to the 404 of a route that does not exist.
    delegator: (request, done) => {
      const scope = corsScopeOf(request.url.split('?')[0]!);
      const allowed = scope === 'public' || (scope === 'creator' && config.creatorApi);
      done(null, allowed ? open : { origin: false });
    },
  });
}
