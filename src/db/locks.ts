import { sql } from 'kysely';
import type { DatabaseHandle } from './client.js';
import type { Executor } from './tx.js';

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

/**
 * Queues the mirror's writes of one processor object (a subscription, a payout) behind each
 * other until the writer commits. A row lock cannot do it for an object seen for the first
 * time: two first reads applied at once would both find no row, and the second's insert
 * would turn into an update that reports the first's state as a change of its own.
 */
export async function lockProcessorObject(trx: Executor, processorId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${processorId}, 0))`.execute(trx);
}
