import net from 'node:net';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { Config, RateLimitConfig } from '../config.js';
import { bearerToken, sessionCookie, sha256, type Principal } from './auth.js';
import { AppError } from './errors.js';

/** Paths no limit counts (probes, the scrape, the document, the processor's signed webhooks); the OpenAPI document declares no rate-limit headers on them. */
export const UNLIMITED_PATHS = new Set(['/health', '/ready', '/metrics', '/openapi.json', '/api/v1/webhooks/processor']);

export interface Limit {
  max: number;
  windowMs: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Limits that routes apply beside the general one, as configured (src/http/rate-limit.ts). */
    rateLimits: { signupPerAddress: Limit };
  }
}

/** Sign-ups per address per hour, as configured (RATE_LIMIT_SIGNUPS_PER_HOUR). */
export function signupLimitOf(config: RateLimitConfig): Limit {
  return { max: config.signupsPerHour, windowMs: 60 * 60_000 };
}

/** The eight 16-bit groups of an IPv6 address, `::` expanded and a trailing dotted IPv4 counted as two. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const split = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const before = split(head);
  const after = tail === undefined ? [] : split(tail);
  return [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
}

/**
 * The client address that per-address limits count: `request.ip` (which honours TRUST_PROXY),
 * an IPv4-mapped IPv6 address as the IPv4 address, and any other IPv6 address by its /64 —
 * one subscriber's network, in which a client can pick a fresh address for every request.
 */
export function clientAddress(request: FastifyRequest): string {
  const ip = (request.ip ?? '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!net.isIPv6(ip)) return ip || 'unknown';
  return `${ipv6Groups(ip.toLowerCase())
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The counter of a verified principal: a creator (all its keys), a member (all its tokens), the operator. */
function principalKey(principal: Principal, request: FastifyRequest): string {
  switch (principal.kind) {
    case 'creator':
      return `creator:${principal.creatorId}`;
    case 'member':
      return `member:${principal.memberId}`;
    case 'admin':
      // By the verified token's digest, so deployments sharing one Redis keep apart.
      return `admin:${sha256(bearerToken(request) ?? '').toString('base64url').slice(0, 16)}`;
  }
}

/**
 * Addresses that have spent their budget of failed credentials, until their window ends. Kept by
 * each node (a peek into the shared counter would cost every request a round trip): with Redis,
 * another node lets at most one more failure of such an address through before it knows too.
 */
function blockedAddresses(capacity: number) {
  const until = new Map<string, number>();
  return {
    add(address: string, untilMs: number) {
      until.delete(address);
      if (until.size >= capacity) until.delete(until.keys().next().value!);
      until.set(address, untilMs);
    },
    /** Milliseconds until the address may try credentials again, or 0. */
    remaining(address: string): number {
      const end = until.get(address);
      if (end === undefined) return 0;
      const left = end - Date.now();
      if (left <= 0) until.delete(address);
      return Math.max(0, left);
    },
  };
}

const retryAfterSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

const tooManyRequests = (message: string, ttlMs: number) =>
  new AppError('rate_limited', `${message} Retry after ${retryAfterSeconds(ttlMs)} seconds.`, undefined, {
    'Retry-After': String(retryAfterSeconds(ttlMs)),
  });

/** A bearer token or the dashboard's session cookie: a credential some route's auth will verify. */
const carriesCredential = (request: FastifyRequest) => bearerToken(request) !== undefined || sessionCookie(request) !== undefined;

const exempt = (request: FastifyRequest) =>
  request.routeOptions.config?.rateLimit === false || UNLIMITED_PATHS.has(request.url.split('?')[0] ?? '') || request.url.startsWith('/docs');

// Counters per store (the in-memory LRU of each; Redis keeps keys until their window ends).
const PRINCIPAL_COUNTERS = 50_000;
const ADDRESS_COUNTERS = 20_000;

/**
 * The general limit: RATE_LIMIT_MAX requests per window per verified principal (a creator,
 * whichever of its keys or dashboard sessions it uses; a member; the operator), and per client address for every request without one (no
 * credential, a wrong one, or one a public route does not check). Counted in memory or, with
 * REDIS_URL, in Redis so that every node spends one budget.
 *
 * A request is counted once, after the route's auth has verified its credential, so a made-up
 * key never opens a fresh budget: it is a failed credential of its address. Requests without a
 * credential are counted first thing (before sign-up's scrypt or anything else). An address
 * whose failed credentials have spent its budget is refused before its credentials are looked
 * up, until the window ends: no database work, and a right key answers like a wrong one, so
 * guessing keys is limited per address. Because junk keys count against their address and
 * principals have a store of their own, junk can create at most one counter per address it
 * controls and can never evict a creator's or member's counter from the in-memory LRU.
 *
 * Answers the Redis connection it counts in (REDIS_URL), for the read routing's pins to share.
 */
export async function registerRateLimit(app: FastifyInstance, config: Pick<Config, 'rateLimit'>): Promise<{ redis?: Redis }> {
  const redis = config.rateLimit.redisUrl
    ? new Redis(config.rateLimit.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
    : undefined;
  if (redis) {
    // While Redis is down, commands fail at once (no offline queue): counting fails open
    // (skipOnError) and a read pin counts as pinned (read-routing.ts); ioredis reconnects.
    redis.on('error', () => undefined);
    app.addHook('onClose', async () => void redis.disconnect());
    // Counting fails open while Redis is unreachable (skipOnError); waiting briefly here
    // means a healthy Redis counts from the first request.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (redis.status !== 'ready') app.log.warn('Redis for rate limiting is not reachable yet; limits are not enforced until it is');
  }
  // No hook of its own (global: false): the counters below are its stores, applied by the hooks here.
  await app.register(rateLimit, { global: false, ...(redis ? { redis, skipOnError: true } : {}) });
  app.decorate('rateLimits', { signupPerAddress: signupLimitOf(config.rateLimit) });

  const { max, windowMs } = config.rateLimit;
  const counter = (cache: number, keyOf: (request: FastifyRequest) => string) => {
    // `cache` (the LRU size) is honoured for stores made by createRateLimit, though its types omit it.
    const options = { max, timeWindow: windowMs, cache, keyGenerator: keyOf };
    return app.createRateLimit(options);
  };
  const perPrincipal = counter(PRINCIPAL_COUNTERS, (request) => principalKey(request.principal!, request));
  const perAddress = counter(ADDRESS_COUNTERS, (request) => `addr:${clientAddress(request)}`);
  const failedCredentials = counter(ADDRESS_COUNTERS, (request) => `auth-failed:${clientAddress(request)}`);
  const blocked = blockedAddresses(ADDRESS_COUNTERS);

  /** Requests that carry a credential, waiting for their route's auth before being counted. */
  const awaitingAuth = new WeakSet<FastifyRequest>();

  async function spend(check: typeof perAddress, request: FastifyRequest, reply: FastifyReply, who: string): Promise<void> {
    const result = await check(request);
    if (result.isAllowed) return;
    reply.header('x-ratelimit-limit', result.max).header('x-ratelimit-remaining', result.remaining).header('x-ratelimit-reset', result.ttlInSeconds);
    if (result.isExceeded) throw tooManyRequests(`Too many requests ${who}: at most ${result.max} every ${windowMs / 1000} seconds.`, result.ttl);
  }

  // Callback-style hooks: every request passes here, and most need no promise of their own.
  app.addHook('onRequest', (request, reply, done) => {
    if (exempt(request)) return done();
    if (!carriesCredential(request)) return void spend(perAddress, request, reply, 'from this address').then(() => done(), done);
    const wait = blocked.remaining(clientAddress(request));
    if (wait > 0) return done(tooManyRequests('Too many requests with invalid credentials from this address.', wait));
    awaitingAuth.add(request);
    done();
  });

  // preParsing: after every onRequest hook (the routes' auth), before the body is read.
  app.addHook('preParsing', (request, reply, _payload, done) => {
    if (!awaitingAuth.delete(request)) return done();
    const spent = request.principal
      ? spend(perPrincipal, request, reply, `for this ${request.principal.kind}`)
      : spend(perAddress, request, reply, 'from this address');
    spent.then(() => done(), done);
  });

  // A credential the route's auth refused (401) is a failed credential of the address; any
  // other failure before counting (say, the database down during auth) counts as a request.
  app.addHook('onError', async (request, _reply, error) => {
    if (!awaitingAuth.delete(request)) return;
    if (error.statusCode !== 401) return void (await perAddress(request));
    const result = await failedCredentials(request);
    if (!result.isAllowed && result.remaining === 0) blocked.add(clientAddress(request), Date.now() + result.ttl);
  });
  return redis ? { redis } : {};
}
