import path from 'node:path';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { connectPostgres, openPglite, type DatabaseHandle } from './client.js';
import { migrateToLatest } from './migrate.js';

/** The database the config names (a PostgreSQL server or the embedded one), migrated. Seeding data is start-up's job (server.ts). */
export async function openDatabase(config: Config, logger: Logger): Promise<DatabaseHandle> {
  const handle = config.databaseUrl
    ? connectPostgres({ url: config.databaseUrl, poolMax: config.databasePoolMax, statementTimeoutMs: config.statementTimeoutMs, logger, routeReads: config.replicaUrls.length > 0 })
    : await openPglite({ dataDir: path.join(config.dataDir, 'pglite'), logger });
  try {
    const applied = await migrateToLatest(handle.db);
    logger.info({ database: handle.kind, applied }, applied.length ? 'database migrated' : 'database schema up to date');
    await warnAboutSettings(handle, logger);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

/**
 * Warns about a PostgreSQL server without autovacuum. Every workout log updates its member's
 * challenge scores in place, and those updates cannot be HOT (the score is in the board's
 * index): without autovacuum their dead versions are never removed (616k in an 8k-row table
 * after ~300k logs of a benchmark, docs/benchmarks.md), and boards and logging slow down as they
 * pile up. A warning, not a refusal: a test or CI server may run without it on purpose. The
 * embedded database (one process, for development) is not checked.
 */
export async function warnAboutSettings(handle: DatabaseHandle, logger: Logger): Promise<void> {
  if (handle.kind !== 'postgres') return;
  const { rows } = await sql<{ autovacuum: string }>`select current_setting('autovacuum') as autovacuum`.execute(handle.db);
  if (rows[0]?.autovacuum === 'off') {
    logger.warn(
      { autovacuum: 'off' },
      'PostgreSQL runs without autovacuum: the rows every workout log updates (challenge scores, records, activity) leave dead versions nothing removes, and boards and logging slow down as they pile up; turn autovacuum on (the default) or vacuum those tables on a schedule',
    );
  }
}
