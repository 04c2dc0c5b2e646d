import { sql } from 'kysely';
import type { DatabaseHandle } from './client.js';

/**
 * Runs `work` only if no other process is running the same job: a PostgreSQL session
 * advisory lock held on its own connection for the duration. The embedded database belongs
 * to one process, so there the job simply runs (and holding its single connection would
 * starve the work itself).
 */
export async function runExclusive<T>(database: DatabaseHandle, lockId: number, work: () => Promise<T>): Promise<T | undefined> {
  if (database.kind === 'pglite') return work();
  return database.db.connection().execute(async (conn) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${sql.lit(lockId)}) as locked`.execute(conn);
    if (!rows[0]?.locked) return undefined;
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(${sql.lit(lockId)})`.execute(conn);
    }
  });
}
