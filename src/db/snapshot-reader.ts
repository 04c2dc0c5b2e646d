import { sql, type ControlledTransaction } from 'kysely';
import type { Db, DatabaseHandle } from './client.js';
import type { Executor } from './tx.js';
import type { Database } from './types.js';

/**
 * A long read in batches (an export) that may wait for a slow client between two batches.
 *
 * - PostgreSQL (`whole`): one read-only repeatable-read transaction, so every batch sees the
 *   snapshot taken at the first; it holds one pooled connection until `close`.
 * - The embedded database (`per-batch`): it has one connection, and a transaction held while
 *   the client reads would stop every other request. Each batch runs on its own and gives the
 *   connection back at once; a batch that is one statement is its own snapshot, and nothing
 *   holds the rows still between two batches.
 */
export interface SnapshotReader {
  readonly consistency: 'whole' | 'per-batch';
  /** Runs one batch's reads; on the embedded database the connection is free again once it returns. */
  read<T>(work: (executor: Executor) => Promise<T>): Promise<T>;
  /** Ends the snapshot and gives its connection back. Safe to call twice or during a `read` (it waits for it); never throws. */
  close(): Promise<void>;
}

export interface SnapshotReaderOptions {
  /**
   * PostgreSQL ends the session if the transaction idles longer than this: a backstop for the
   * caller's own idle cut-off, should this process stop calling `close` (a stuck event loop).
   */
  idleBackstopMs: number;
}

export async function openSnapshotReader(database: Pick<DatabaseHandle, 'db' | 'kind'>, opts: SnapshotReaderOptions): Promise<SnapshotReader> {
  if (database.kind === 'pglite') return perBatch(database.db);
  const trx = await database.db.startTransaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute();
  try {
    await sql`select set_config('idle_in_transaction_session_timeout', ${String(Math.ceil(opts.idleBackstopMs))}, true)`.execute(trx);
  } catch (err) {
    await trx.rollback().execute().catch(() => {});
    throw err;
  }
  return wholeSnapshot(trx);
}

function perBatch(db: Db): SnapshotReader {
  const reader = tracked('per-batch', db, async () => {});
  return {
    ...reader,
    // PGlite runs in this thread and its queries resolve without an I/O turn: without this
    // pause a client that reads fast would get every batch before another request is even read.
    read: async (work) => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      return reader.read(work);
    },
  };
}

function wholeSnapshot(trx: ControlledTransaction<Database>): SnapshotReader {
  // Read-only: a rollback changes nothing and also ends a transaction whose session the server already ended.
  return tracked('whole', trx, () => trx.rollback().execute());
}

/** `close` waits for a read in flight, so whoever gets the slot next finds the connection given back. */
function tracked(consistency: SnapshotReader['consistency'], executor: Executor, end: () => Promise<unknown>): SnapshotReader {
  let inFlight: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;
  return {
    consistency,
    read(work) {
      if (closing) return Promise.reject(new Error('the snapshot is closed'));
      const run = work(executor);
      inFlight = run.catch(() => {});
      return run;
    },
    close() {
      closing ??= inFlight.then(end).then(
        () => {},
        () => {},
      );
      return closing;
    },
  };
}
