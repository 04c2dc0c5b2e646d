import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

/**
 * Where the queries of the work running now go: a replica's pool while a request routed to
 * one runs (http/read-routing.ts), the primary otherwise. Kept in AsyncLocalStorage so the
 * repos, built once with the primary's Kysely, need no second copy for reads.
 */
const target = new AsyncLocalStorage<pg.Pool>();

/** The subset of pg.Pool that Kysely's PostgresDialect and the direct queries call. */
export type QueryPool = Pick<pg.Pool, 'connect' | 'query' | 'end'>;

/**
 * The primary's pool as Kysely and the direct queries (db/compiled.ts) see it when replicas
 * are configured: every checkout and query goes to the pool of the current request's
 * replica, if it has one, else to the primary.
 */
export function routingPool(primary: pg.Pool): QueryPool {
  return {
    connect: ((...args: unknown[]) => (target.getStore() ?? primary).connect(...(args as []))) as pg.Pool['connect'],
    query: ((...args: unknown[]) => (target.getStore() ?? primary).query(...(args as [string]))) as pg.Pool['query'],
    end: () => primary.end(),
  };
}

/** Runs `work` with its queries on `replica`. */
export const onReplica = <T>(replica: pg.Pool, work: () => T): T => target.run(replica, work);

/** Runs `work` on the primary even inside a replica-routed request (background tasks it starts). */
export const onPrimary = <T>(work: () => T): T => target.exit(work);
