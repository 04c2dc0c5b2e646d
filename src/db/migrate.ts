import fs from 'node:fs/promises';
import path from 'node:path';
import { Migrator, sql, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Db } from './client.js';
import { PROJECT_ROOT } from '../paths.js';

export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'migrations');

/**
 * Feeds the reviewed plain-SQL files in migrations/ (NNNN_name.sql) to Kysely's Migrator,
 * which records what ran in kysely_migration and holds a PostgreSQL advisory lock while
 * migrating, so two processes starting together against one server apply each file once.
 */
class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly dir: string) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await fs.readdir(this.dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const text = await fs.readFile(path.join(this.dir, file), 'utf8');
      migrations[file.replace(/\.sql$/, '')] = {
        up: async (db) => {
          await sql.raw(text).execute(db);
        },
      };
    }
    return migrations;
  }
}

// Any fixed 64-bit number; it only has to differ from other advisory locks the app takes.
const MIGRATION_LOCK_ID = 7_321_004_117;

export async function migrateToLatest(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  // Kysely's Migrator creates its bookkeeping tables before taking its own lock, which
  // races when two processes start on an empty database. So the whole run happens on one
  // connection holding a session advisory lock: the second process waits, then finds
  // every file applied.
  const { error, results }: MigrationResultSet = await retryingCatalogRaces(() => db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${sql.lit(MIGRATION_LOCK_ID)})`.execute(conn);
    // A migration that rewrites a large table (0032 and 0035 touch every directory row: seconds
    // at a million members) must not be cut off by the requests' statement timeout
    // (DATABASE_STATEMENT_TIMEOUT_MS), which this pooled connection carries. Reset afterwards,
    // back to the connection's own default, before the pool hands it to a request.
    await sql`set statement_timeout = 0`.execute(conn);
    try {
      // Name the schema explicitly: otherwise Kysely counts its bookkeeping tables as present
      // when they exist in any schema of the database, not the one being migrated.
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(conn);
      const migrationTableSchema = rows[0]?.schema ?? 'public';
      // Unordered: a file merged later with a lower number than one already applied (two
      // branches numbering in parallel) is applied rather than refused.
      return await new Migrator({ db: conn, provider: new SqlFileMigrationProvider(dir), migrationTableSchema, allowUnorderedMigrations: true }).migrateToLatest();
    } finally {
      await sql`reset statement_timeout`.execute(conn);
      await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_LOCK_ID)})`.execute(conn);
    }
  }));
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    const where = failed ? ` (in ${failed.migrationName})` : '';
    throw new Error(`database migration failed${where}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * What another process's DDL does to Kysely's check for its bookkeeping tables, which
 * introspects every column of every table of every schema and asks `pg_get_serial_sequence`
 * about each: a schema dropped meanwhile (a finished test run's, on a shared server) fails
 * the scan with 3F000, a table dropped with 42P01, a column dropped (another schema's
 * migration 0032 moving `creator_members.last_active_at`) with 42703. The catalog scan reads
 * one snapshot, the function the live catalog; nothing of ours caused it, so try again.
 */
const CATALOG_RACES = new Set(['3F000', '42P01', '42703']);

/**
 * Runs a Kysely migration, again (up to 3 times in all) when it failed with a catalog race
 * (above) before any file ran. A file that fails is never retried.
 */
export async function retryingCatalogRaces(run: () => Promise<MigrationResultSet>): Promise<MigrationResultSet> {
  for (let attempt = 1; ; attempt++) {
    const result = await run();
    const code = (result.error as { code?: string } | undefined)?.code;
    const raced = code !== undefined && CATALOG_RACES.has(code) && !result.results?.some((r) => r.status === 'Error');
    if (!raced || attempt === 3) return result;
  }
}
