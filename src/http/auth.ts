import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyScope } from '../db/types.js';
import type { TaskRunner } from '../jobs/tasks.js';
import { AppError } from './errors.js';

export type { ApiKeyScope } from '../db/types.js';

export type Principal =
  | { kind: 'creator'; creatorId: string; apiKeyId: string; scope: ApiKeyScope }
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
 */
export function creatorAuth(keys: ApiKeyLookup, tasks?: Pick<TaskRunner, 'run'>) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request);
    if (!token) throw unauthorized('Send your API key as "Authorization: Bearer tribes_sk_...".');
    if (!API_KEY_PATTERN.test(token)) throw unauthorized('The API key is malformed; creator keys look like tribes_sk_ followed by 32 or more letters and digits.');
    const hash = sha256(token);
    const row = await keys.findActiveApiKey(hash);
    if (!row || !crypto.timingSafeEqual(row.key_hash, hash)) {
      throw unauthorized('The API key is unknown or has been revoked.');
    }
    if (row.touch_due && tasks) {
      const log = request.log;
      tasks.run('api key last used', () =>
        keys.touchApiKey(row.id).catch((err: unknown) => log.warn({ err, apiKeyId: row.id }, 'could not record when the API key was last used')),
      );
    }
    request.principal = { kind: 'creator', creatorId: row.creator_id, apiKeyId: row.id, scope: row.scope };
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
