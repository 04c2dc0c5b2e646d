import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';

export type Principal =
  | { kind: 'creator'; creatorId: string; apiKeyId: string }
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

export interface ApiKeyLookup {
  /** Finds the live (unrevoked) key with this SHA-256 digest. */
  findActiveApiKey(hash: Buffer): Promise<{ id: string; creator_id: string; key_hash: Uint8Array } | undefined>;
}

/**
 * onRequest hook for creator routes. The key is looked up by its SHA-256 digest through a
 * unique index; the stored digest is then compared in constant time. Nothing is cached, so
 * a revoked key fails on the very next request.
 */
export function creatorAuth(keys: ApiKeyLookup) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request);
    if (!token) throw unauthorized('Send your API key as "Authorization: Bearer tribes_sk_...".');
    if (!API_KEY_PATTERN.test(token)) throw unauthorized('The API key is malformed; creator keys look like tribes_sk_ followed by 32 or more letters and digits.');
    const hash = sha256(token);
    const row = await keys.findActiveApiKey(hash);
    if (!row || !crypto.timingSafeEqual(row.key_hash, hash)) {
      throw unauthorized('The API key is unknown or has been revoked.');
    }
    request.principal = { kind: 'creator', creatorId: row.creator_id, apiKeyId: row.id };
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
