import { sql } from 'kysely';
import type { DatabaseHandle } from '../src/db/client.js';
import { isDatabaseUnavailable } from '../src/db/errors.js';
import type { Executor } from '../src/db/tx.js';

/** A whole creator key, member token, dashboard session or sign-in link token, as opposed to the display prefix kept beside a key's hash. */
const SECRET = 'tribes_(sk_[A-Za-z0-9]{32,}|mt_[A-Za-z0-9]{40}|ses_[A-Za-z0-9]{40}|login_[A-Za-z0-9]{40})';

/**
 * Secrets are never stored (DESIGN §4: keys only as hashes): when a test app closes, no row of
 * any table of the app's schema may hold a whole key or token — not a stored idempotent
 * answer, not a log of events. On PostgreSQL the schema is the run's, shared by every file,
 * and `since` (writesFrom, taken when the app was built) narrows the scan to the app's span.
 */
export async function assertNoSecretsStored(database: DatabaseHandle, since?: string): Promise<void> {
  // Partitioned tables as a whole, not partition by partition: another file may drop a
  // partition (the idempotency keys' purge) between this list and its scan. No test drops a
  // plain table of the schema (the ones they drop are temporary, in a schema of their own).
  const listed = await unlessDatabaseGone(
    sql<{ name: string }>`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition`.execute(database.db),
  );
  if (!listed) return;
  const found: string[] = [];
  // On PostgreSQL the run's tables hold every file's rows: the scan may take longer than a
  // test's own short statement timeout (a file testing timeouts sets 2 s), so it lifts it.
  await database.db.transaction().execute(async (trx) => {
    if (database.kind === 'postgres') await sql`set local statement_timeout = '120s'`.execute(trx);
    // Only row versions written since `since`: a row's xmin is younger than that by at most the
    // ids handed out since (age() counts in the 32-bit ids rows carry, across wraparound). The
    // whole run's rows, turned to text and matched at every app's close, had been 40 % of
    // PostgreSQL's work in the PostgreSQL test stage.
    const written = since === undefined ? sql`true` : sql`age(t.xmin) <= ${await idsSince(trx, since)}`;
    for (const { name } of listed.rows) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)} t
        where case when ${written} then t::text ~ ${SECRET} else false end`.execute(trx);
      if (rows[0]!.n > 0) found.push(`${name} (${rows[0]!.n} rows)`);
    }
  });
  if (found.length) throw new Error(`secrets stored in clear: ${found.join(', ')}`);
}

/**
 * On PostgreSQL, where the run's tables hold every file's rows, the oldest transaction id that
 * can still write (64-bit, as text): every row version an app built now writes is at least
 * that young. Undefined on the embedded database, whose copy is the file's own.
 */
export async function writesFrom(database: DatabaseHandle): Promise<string | undefined> {
  if (database.kind !== 'postgres') return undefined;
  const read = await unlessDatabaseGone(sql<{ xid: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xid`.execute(database.db));
  return read?.rows[0]!.xid;
}

/**
 * What `step` gives, or undefined when the database is gone: a file that takes its database
 * down on purpose (or never reaches it) leaves nothing there to read or clean up.
 */
export async function unlessDatabaseGone<T>(step: Promise<T>): Promise<T | undefined> {
  try {
    return await step;
  } catch (err) {
    if (isDatabaseUnavailable(err)) return undefined;
    throw err;
  }
}

/** How many transaction ids were handed out from `since` to this transaction's own (which it takes). */
async function idsSince(trx: Executor, since: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`select (pg_current_xact_id()::text::bigint - ${since}::bigint)::text as n`.execute(trx);
  return Number(rows[0]!.n);
}
