import type { Kysely, Transaction } from 'kysely';
import type { Database } from './types.js';

/** Either the database or an open transaction: repos accept both, services decide which. */
export type Executor = Kysely<Database> | Transaction<Database>;

export const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();
export const isoOrNull = (d: Date | string | null | undefined): string | null => (d == null ? null : iso(d));
