import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { initPgliteDataDir } from './pglite-init.js';
import { PglitePool } from './pglite-pool.js';
import { registerDirectQuery } from './compiled.js';
import { routingPool } from './read-routing.js';
import { preparingClient } from './prepared.js';
import type { Database } from './types.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** Cheap round trip used by /ready; throws when the database cannot answer. */
  ping(): Promise<void>;
  /** The connections now open, idle, and callers waiting for one (the embedded database has one connection). */
  connections(): ConnectionCounts;
  close(): Promise<void>;
  /** PostgreSQL only: the pool itself (the replica monitor's own queries). */
  pool?: pg.Pool;
}

export interface ConnectionCounts {
  total: number;
  idle: number;
  waiting: number;
}

export interface PostgresOptions {
  url: string;
  poolMax: number;
  statementTimeoutMs: number;
  logger?: Logger;
  connectionTimeoutMs?: number;
  /** Read replicas are configured: queries go where db/read-routing.ts says (the primary unless a request was routed to a replica). */
  routeReads?: boolean;
}

// int8 (counts, sums of cents) as a JS number, as PGlite already does: cents stay far
// below 2^53, and one representation on both engines keeps the code engine-agnostic.
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export function connectPostgres(opts: PostgresOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolMax,
    statement_timeout: opts.statementTimeoutMs,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 3000,
    idleTimeoutMillis: 30_000,
    types: pgTypes,
  });
  // An idle client losing its server (restart, failover) must not crash the process; the
  // pool drops it and the next checkout reconnects.
  pool.on('error', (err) => opts.logger?.warn({ err: { message: err.message } }, 'idle database client error'));
  // A connection can also die while checked out between two queries (or just as it is
  // handed out); pg then emits 'error' on the client, which must not crash the process.
  // The failing query rejects on its own, and the pool discards the dead client on release.
  pool.on('connect', (client) => {
    preparingClient(client);
    client.on('error', (err) => opts.logger?.warn({ err: { message: err.message } }, 'database connection lost'));
  });
  const queries = opts.routeReads ? routingPool(pool) : pool;
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: queries as pg.Pool }) });
  registerDirectQuery(db, async (text, values, name) => (await queries.query({ text, values: values as unknown[], ...(name ? { name } : {}) })).rows);
  return {
    db,
    kind: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    connections: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
    pool,
  };
}

export interface PgliteOptions {
  /** Directory for the database files; omit for an in-memory database. */
  dataDir?: string;
  /** Told when a new data directory had to be created in-process (more memory, same result). */
  logger?: Logger;
}

/**
 * PostgreSQL settings of every embedded database, on top of PGlite's own start flags.
 *
 * shared_buffers: initdb writes 128MB into postgresql.conf, and inside PGlite all of it is
 * resident from the start (Emscripten's anonymous mmap takes the block from the WebAssembly
 * heap and zero-fills it), ~115 MB of an idle server's ~400 MB. 16MB (2,048 pages) holds a
 * demo's and a small tribe's working set; a page beyond it is read again from the data
 * directory's files, which the OS caches anyway. A setting given here wins over
 * postgresql.conf, so data directories made before this apply it too.
 */
export const PGLITE_START_PARAMS: readonly string[] = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

export async function openPglite(opts: PgliteOptions): Promise<DatabaseHandle> {
  if (opts.dataDir) {
    fs.mkdirSync(path.dirname(opts.dataDir), { recursive: true });
    try {
      await initPgliteDataDir(opts.dataDir, [...PGLITE_START_PARAMS]);
    } catch (err) {
      opts.logger?.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'embedded database: initdb in a child process failed; running it in this process');
    }
  }
  const pglite = new PGlite({
    startParams: [...PGLITE_START_PARAMS],
    // Trigram indexes for the member search (migrations/0013); loaded on demand by CREATE EXTENSION.
    extensions: { pg_trgm },
    ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
  });
  await pglite.waitReady;
  const pool = new PglitePool(pglite);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }) });
  return {
    db,
    kind: 'pglite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    connections: () => pool.connections(),
    close: () => db.destroy(),
  };
}
