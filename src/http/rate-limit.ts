import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { bearerToken, sha256 } from './auth.js';
import { AppError } from './errors.js';

const UNLIMITED_PATHS = new Set(['/health', '/ready', '/metrics', '/openapi.json', '/api/v1/webhooks/processor']);

/**
 * Rate limiting per API key digest (per address without a key), counted in memory or, with
 * REDIS_URL, in Redis so that every node spends one budget. Runs as the first root hook.
 */
export async function registerRateLimit(app: FastifyInstance, config: Pick<Config, 'rateLimit'>): Promise<void> {
  const redis = config.rateLimit.redisUrl
    ? new Redis(config.rateLimit.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
    : undefined;
  if (redis) {
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
  await app.register(rateLimit, {
    // Not per route: a route-level hook would run after the creator-auth hook, so requests
    // with unknown keys (brute force) would never be counted. One root hook runs first.
    global: false,
    max: config.rateLimit.max,
    timeWindow: config.rateLimit.windowMs,
    ...(redis ? { redis, skipOnError: true } : {}),
    // Per API key (a digest of it, never the key itself); unauthenticated callers per address.
    keyGenerator: (request) => {
      const token = bearerToken(request);
      return token ? `key:${sha256(token).toString('base64url')}` : `ip:${request.ip}`;
    },
    allowList: (request) => UNLIMITED_PATHS.has(request.url.split('?')[0] ?? '') || request.url.startsWith('/docs'),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Too many requests: at most ${context.max} per ${context.after}. Retry after the Retry-After seconds.`, undefined, {
        'Retry-After': String(Math.max(1, Math.ceil(context.ttl / 1000))),
      }),
  });

  app.addHook('onRequest', app.rateLimit());
}
