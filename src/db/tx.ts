import type { Kysely, Transaction } from 'kysely';
import type { Database } from './types.js';

/** Either the database or an open transaction: repos accept both, services decide which. */
export type Executor = Kysely<Database> | Transaction<Database>;

/**
 * A timestamptz as JavaScript's toISOString writes it (milliseconds, Z), for data built in SQL
 * and for instants a hot read answers as they are (no Date parsed and written again per row).
 */
export const ISO = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();
export const isoOrNull = (d: Date | string | null | undefined): string | null => (d == null ? null : iso(d));

/**
 * The stored answer of a keyed request (src/http/idempotency.ts), written in the same
 * transaction as the request's effect: `claim` first (a concurrent request with the same
 * key waits, then finds it taken), `record` with what the service returns, just before commit.
 */
export interface StoredAnswer<T> {
  claim(trx: Transaction<Database>): Promise<void>;
  record(trx: Transaction<Database>, result: T): Promise<void>;
}

/**
 * One transaction for `work` and, when the request carries an Idempotency-Key, its stored
 * answer: after any crash either both exist or neither.
 */
export function inTransaction<T>(db: Kysely<Database>, answer: StoredAnswer<T> | undefined, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await answer?.claim(trx);
    const result = await work(trx);
    await answer?.record(trx, result);
    return result;
  });
}
