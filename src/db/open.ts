import path from 'node:path';
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
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}
