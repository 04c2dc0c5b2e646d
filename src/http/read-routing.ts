import type { FastifyInstance, preHandlerAsyncHookHandler, RouteHandlerMethod } from 'fastify';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { databaseFailure } from '../db/errors.js';
import { onReplica } from '../db/read-routing.js';
import { AppError } from './errors.js';
import type { ReplicaSet } from '../db/replicas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `replica`: a heavy, lag-tolerant read a read replica may serve (docs/operations.md, Scale-out), unless
     * the caller wrote within the last moments. Its OpenAPI description says so.
     */
    reads?: 'replica';
  }
  interface FastifyRequest {
    /** The replica this request's queries go to (null: the primary). */
    readReplica: pg.Pool | null;
  }
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A failure of the replica rather than of the read: unreachable, shut down, or a query cancelled by a conflict with recovery (40001). */
const replicaFailed = (err: unknown): boolean =>
  databaseFailure(err) === 'unavailable' ||
  (err as { code?: unknown } | null)?.code === '40001' ||
  (err instanceof AppError && err.code === 'service_unavailable');

/** What a replica-routed route's OpenAPI description says of it (every other route reads the primary). */
export const ON_REPLICA =
  'Served by a read replica when the service has them (DATABASE_REPLICA_URL): up to REPLICA_MAX_LAG_MS (1 s) behind the primary, except for a caller who wrote in the last moments, whose reads go to the primary (read-your-writes).';

/**
 * Appends ON_REPLICA to the description of every route marked `reads: 'replica'`, whether or
 * not replicas are configured here, so the published document states each route's choice.
 * Registered before the routes (and before the OpenAPI document is generated).
 */
export function describeReadRouting(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.reads !== 'replica' || !route.schema) return;
    const schema = route.schema as { description?: string };
    if (!schema.description?.includes(ON_REPLICA)) schema.description = `${schema.description ?? ''} ${ON_REPLICA}`.trim();
  });
}

/** Who a request acts as, for read-your-writes: a creator (any of its keys and sessions) or a member. */
const principalKey = (request: { principal: { kind: string; creatorId?: string; memberId?: string } | null }): string | null => {
  const p = request.principal;
  if (p?.kind === 'creator') return `creator:${p.creatorId}`;
  if (p?.kind === 'member') return `member:${p.memberId}`;
  return null;
};

/**
 * Read-your-writes across nodes: a creator or member who writes is pinned to the primary for
 * `pinMs` (the replicas' lag bound and then some; a replica further behind is not read
 * from), in this process and, with REDIS_URL, in Redis for every node. While Redis cannot
 * answer, every read counts as pinned: the primary serves it, never a stale replica.
 */
export function createPins({ pinMs, redis }: { pinMs: number; redis?: Redis }) {
  const local = new Map<string, number>();
  const redisKey = (key: string) => `tribes:written:${key}`;
  return {
    async pin(key: string): Promise<void> {
      const now = Date.now();
      if (local.size > 100_000) for (const [k, until] of local) if (until <= now) local.delete(k);
      local.set(key, now + pinMs);
      if (redis) await redis.set(redisKey(key), '1', 'PX', pinMs).catch(() => undefined);
    },
    async pinned(key: string): Promise<boolean> {
      if ((local.get(key) ?? 0) > Date.now()) return true;
      if (!redis) return false;
      try {
        return (await redis.exists(redisKey(key))) === 1;
      } catch {
        return true;
      }
    },
  };
}

export type Pins = ReturnType<typeof createPins>;

/**
 * Routes marked `config: { reads: 'replica' }` run their queries on a healthy replica
 * (db/replicas.ts) unless the caller is pinned to the primary by a recent write; any other
 * route, every write and everything a route starts in the background (jobs/tasks.ts) stays
 * on the primary. Registered only when replicas are configured, before the routes.
 */
export function registerReadRouting(app: FastifyInstance, { replicas, pins }: { replicas: ReplicaSet; pins: Pins }): void {
  app.decorateRequest('readReplica', null);
  // After authentication (the scopes' onRequest hooks), before the handler: a write pins its caller.
  const pinWriter: preHandlerAsyncHookHandler = async (request) => {
    if (READS.has(request.method)) return;
    const key = principalKey(request);
    if (key) await pins.pin(key);
  };
  app.addHook('preHandler', pinWriter);

  const choose: preHandlerAsyncHookHandler = async (request) => {
    const key = principalKey(request);
    if (key && (await pins.pinned(key))) return;
    request.readReplica = replicas.pick();
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.reads !== 'replica') return;
    const handler = route.handler as RouteHandlerMethod;
    route.handler = async function (this: FastifyInstance, request, reply) {
      const replica = request.readReplica;
      if (!replica) return handler.call(this, request, reply);
      try {
        return await onReplica(replica, () => handler.call(this, request, reply));
      } catch (err) {
        // The replica went away under the read (or cancelled it for a conflict with recovery):
        // read the primary instead, once, unless an answer has started; the monitor's next tick
        // decides whether the replica is back.
        if (reply.sent || !replicaFailed(err)) throw err;
        replicas.suspect(replica);
        request.readReplica = null;
        return handler.call(this, request, reply);
      }
    } as typeof route.handler;
    const own = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [...own, choose] as typeof route.preHandler;
  });
}
