import type { ColumnType } from 'kysely';

/** Columns the database fills in on insert (defaults) but that are always read back. */
export type Defaulted<T> = ColumnType<T, T | undefined, T>;
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
