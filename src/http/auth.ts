import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyScope } from '../db/types.js';
import type { TaskRunner } from '../jobs/tasks.js';
import { DASHBOARD_CSRF_HEADER, DASHBOARD_CSRF_VALUE, DASHBOARD_SESSION_COOKIE } from './dashboard-session.js';
import { AppError } from './errors.js';

export type { ApiKeyScope } from '../db/types.js';
export { DASHBOARD_CSRF_HEADER, DASHBOARD_CSRF_VALUE, DASHBOARD_SESSION_COOKIE } from './dashboard-session.js';

/** How a creator request authenticated: an API key, or the dashboard's session cookie. `credentialId` is the key's or the session's id. */
export type CreatorCredential = 'api_key' | 'session';

export type Principal =
  | { kind: 'creator'; creatorId: string; scope: ApiKeyScope; via: CreatorCredential; credentialId: string }
  | { kind: 'member'; memberId: string }
  | { kind: 'admin' };

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export const API_KEY_PREFIX = 'tribes_sk_';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const API_KEY_RANDOM_CHARS = 40;
const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9]{32,128}$`);

/** Uniform base62 from rejection sampling (a plain modulo would bias the first letters). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** One-shot (crypto.hash): every authenticated request hashes its credential, and a Hash stream object per call adds up. */
export const sha256 = (value: string): Buffer => crypto.hash('sha256', value, 'buffer');

export interface NewApiKey {
  key: string;
  hash: Buffer;
  prefix: string;
}

export function generateApiKey(): NewApiKey {
  const key = API_KEY_PREFIX + randomBase62(API_KEY_RANDOM_CHARS);
  return { key, hash: sha256(key), prefix: key.slice(0, API_KEY_PREFIX.length + 6) };
}

export const SESSION_TOKEN_PREFIX = 'tribes_ses_';
const SESSION_TOKEN_PATTERN = new RegExp(`^${SESSION_TOKEN_PREFIX}[A-Za-z0-9]{40}$`);

/** A new dashboard session token: what the cookie holds, and the digest the database keeps. */
export function generateSessionToken(): { token: string; hash: Buffer } {
  const token = SESSION_TOKEN_PREFIX + randomBase62(40);
  return { token, hash: sha256(token) };
}

/**
 * The dashboard session cookie's value, or undefined without one. Parsed by hand (one name
 * to find, no dependency); the first of duplicate names wins, as browsers send the most
 * specific path first.
 */
export function sessionCookie(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === DASHBOARD_SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The bearer token of the request, or undefined when the header is absent or not Bearer. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export const unauthorized = (message: string) =>
  new AppError('unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer' });

/** Compares secrets through their digests so neither length nor content leaks through timing. */
export function safeEqual(a: string, b: string): boolean {
  return crypto.timingSafeEqual(sha256(a), sha256(b));
}

/**
 * The scope a creator request needs, by its method: reads (GET, and HEAD, which Fastify answers
 * for every GET route) any key; every other method a `full` key. The one rule of scopes: the
 * auth hook below enforces it, and the OpenAPI document declares it per operation
 * (src/http/openapi.ts), so the two cannot disagree.
 */
export const requiredScope = (method: string): ApiKeyScope => (method === 'GET' || method === 'HEAD' ? 'read' : 'full');

const allows = (held: ApiKeyScope, needed: ApiKeyScope): boolean => held === 'full' || needed === 'read';

export const INSUFFICIENT_SCOPE_MESSAGE =
  'This API key is read-only (scope "read"): it may make GET requests only. Use a key with scope "full" to make changes; a full key can create one with POST /api/v1/api-keys.';

export interface ActiveApiKey {
  id: string;
  creator_id: string;
  key_hash: Uint8Array;
  scope: ApiKeyScope;
  /** last_used_at is null or over a minute old, by the database's clock (not this node's). */
  touch_due: boolean;
}

export interface ApiKeyLookup {
  /** Finds the live (unrevoked) key with this SHA-256 digest. */
  findActiveApiKey(hash: Buffer): Promise<ActiveApiKey | undefined>;
  /** Sets last_used_at to now unless another request did within the minute. */
  touchApiKey(keyId: string): Promise<unknown>;
}

export interface ActiveSession {
  id: string;
  creator_id: string;
  token_hash: Uint8Array;
  revoked: boolean;
  /** Past its absolute end (14 days after sign-in). */
  expired: boolean;
  /** Unused for 12 hours. */
  idle: boolean;
  /** last_seen_at is over a minute old, by the database's clock. */
  touch_due: boolean;
}

export interface SessionLookup {
  /** The session with this SHA-256 digest, however dead, so the 401 can say why. */
  findSession(hash: Buffer): Promise<ActiveSession | undefined>;
  /** Sets last_seen_at to now unless another request did within the minute. */
  touchSession(sessionId: string): Promise<unknown>;
}

const NEW_LINK = 'open a new sign-in link (npm run cli -- creators login-link --email YOUR_EMAIL, or POST /api/v1/dashboard/login-links with an API key).';

/** What a cookie-authenticated write lacks of the CSRF rule (an Origin of this server's, and X-Tribes-CSRF: 1), or undefined. */
function csrfLack(request: FastifyRequest, publicOrigin: string | undefined): string | undefined {
  const lacks: string[] = [];
  const origin = request.headers.origin;
  if (typeof origin !== 'string') lacks.push('an Origin header');
  else if (origin !== `${request.protocol}://${request.host}` && origin !== publicOrigin) lacks.push('an Origin of this server (the request came from another site)');
  if (request.headers[DASHBOARD_CSRF_HEADER.toLowerCase()] !== DASHBOARD_CSRF_VALUE) lacks.push(`the header "${DASHBOARD_CSRF_HEADER}: ${DASHBOARD_CSRF_VALUE}"`);
  return lacks.length ? lacks.join(' and ') : undefined;
}

/** Runs last_seen_at/last_used_at's conditional update in the background, never failing the request. */
function touchLater(request: FastifyRequest, tasks: Pick<TaskRunner, 'run'> | undefined, what: string, touch: () => Promise<unknown>): void {
  if (!tasks) return;
  const log = request.log;
  tasks.run(what, () => touch().catch((err: unknown) => log.warn({ err }, `could not record when the ${what}`)));
}

export interface CreatorAuthOptions {
  /** Dashboard sessions; without them the cookie is ignored. */
  sessions?: SessionLookup;
  /** PUBLIC_URL: its origin passes the CSRF check beside the request's own. */
  publicUrl?: string;
}

/**
 * onRequest hook for creator routes. The key is looked up by its SHA-256 digest through a
 * unique index; the stored digest is then compared in constant time. Nothing is cached, so
 * a revoked key fails on the very next request, on every node. A `read` key is refused on a
 * write here, before any handler runs (so before any lookup that could answer 404).
 *
 * last_used_at is kept to the minute without a write per request: the lookup says whether the
 * stored time is over a minute old, and only then is one conditional update started — in the
 * background (`tasks`, which shutdown waits for), never awaited by the request and never
 * failing it.
 *
 * The dashboard's session cookie is read only when there is no Authorization header at all,
 * so the API-key path does no more work than before. A session acts with scope `full`; on a
 * write it must also pass the CSRF check, and the credential routes refuse it (requireApiKey).
 */
export function creatorAuth(keys: ApiKeyLookup, tasks?: Pick<TaskRunner, 'run'>, options: CreatorAuthOptions = {}) {
  const { sessions } = options;
  const publicOrigin = options.publicUrl ? new URL(options.publicUrl).origin : undefined;

  async function bySession(request: FastifyRequest, cookie: string, lookup: SessionLookup): Promise<void> {
    if (!SESSION_TOKEN_PATTERN.test(cookie)) throw unauthorized(`The dashboard session cookie is malformed: ${NEW_LINK}`);
    const hash = sha256(cookie);
    const row = await lookup.findSession(hash);
    if (!row || !crypto.timingSafeEqual(row.token_hash, hash)) throw unauthorized(`The dashboard session is unknown: ${NEW_LINK}`);
    if (row.revoked) throw unauthorized(`This dashboard session was signed out (revoked): ${NEW_LINK}`);
    if (row.expired) throw unauthorized(`Your dashboard session has expired, 14 days after you signed in: ${NEW_LINK}`);
    if (row.idle) throw unauthorized(`Your dashboard session has expired after 12 hours without use: ${NEW_LINK}`);
    if (row.touch_due) touchLater(request, tasks, 'dashboard session was last seen', () => lookup.touchSession(row.id));
    request.principal = { kind: 'creator', creatorId: row.creator_id, scope: 'full', via: 'session', credentialId: row.id };
    if (requiredScope(request.method) === 'read') return;
    const lack = csrfLack(request, publicOrigin);
    if (lack) throw new AppError('csrf_failed', `A change made with the dashboard session cookie needs ${lack}. The dashboard sends both; other sites cannot.`);
  }

  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (sessions && request.headers.authorization === undefined) {
      const cookie = sessionCookie(request);
      if (cookie !== undefined) return bySession(request, cookie, sessions);
    }
    const token = bearerToken(request);
    if (!token) throw unauthorized('Send your API key as "Authorization: Bearer tribes_sk_...".');
    if (!API_KEY_PATTERN.test(token)) throw unauthorized('The API key is malformed; creator keys look like tribes_sk_ followed by 32 or more letters and digits.');
    const hash = sha256(token);
    const row = await keys.findActiveApiKey(hash);
    if (!row || !crypto.timingSafeEqual(row.key_hash, hash)) {
      throw unauthorized('The API key is unknown or has been revoked.');
    }
    if (row.touch_due) touchLater(request, tasks, 'API key was last used', () => keys.touchApiKey(row.id));
    request.principal = { kind: 'creator', creatorId: row.creator_id, scope: row.scope, via: 'api_key', credentialId: row.id };
    if (!allows(row.scope, requiredScope(request.method))) throw new AppError('insufficient_scope', INSUFFICIENT_SCOPE_MESSAGE);
  };
}

export function adminAuth(adminToken: string) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request);
    if (!token) throw unauthorized('Send the admin token as "Authorization: Bearer <ADMIN_TOKEN>".');
    if (!safeEqual(token, adminToken)) throw unauthorized('The admin token is not valid.');
    request.principal = { kind: 'admin' };
  };
}

/** The authenticated creator of a request on a creator route. */
export function creatorOf(request: FastifyRequest): string {
  if (request.principal?.kind !== 'creator') throw unauthorized('This route needs a creator API key.');
  return request.principal.creatorId;
}

/**
 * For the routes that make or end credentials (API keys, sign-in links): an API key only.
 * A stolen session cookie must not be able to turn itself into a key that outlives it.
 */
export function requireApiKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind !== 'creator') throw unauthorized('This route needs a creator API key.');
  if (principal.via !== 'api_key') {
    throw new AppError(
      'session_not_allowed',
      'This operation needs an API key with scope "full" (Authorization: Bearer tribes_sk_...); a dashboard session cannot create or revoke credentials.',
    );
  }
  return principal.creatorId;
}
