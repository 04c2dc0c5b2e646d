import fs from 'node:fs/promises';
import path from 'node:path';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { retryingCatalogRaces } from '../../db/migrate.js';
import { PROJECT_ROOT } from '../../paths.js';

export const SIMULATOR_MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'src/processor/simulator/migrations');
export const DEFAULT_SCHEMA = 'processor_sim';

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The simulator's own NNNN_name.sql files, written without schema names: each runs with
 * `SET LOCAL search_path` to the simulator schema. SET LOCAL ends with the migration
 * transaction, so the session (on PGlite, the one connection the main app shares) keeps
 * its own search_path afterwards.
 */
class SchemaSqlProvider implements MigrationProvider {
  constructor(private readonly schema: string) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await fs.readdir(SIMULATOR_MIGRATIONS_DIR)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
    const out: Record<string, Migration> = {};
    for (const file of files) {
      const text = await fs.readFile(path.join(SIMULATOR_MIGRATIONS_DIR, file), 'utf8');
      out[file.replace(/\.sql$/, '')] = {
        up: async (db) => {
          await sql.raw(`SET LOCAL search_path TO ${quoteIdent(this.schema)}, public;\n${text}`).execute(db);
        },
      };
    }
    return out;
  }
}

/** Creates/updates the simulator schema; Kysely's migration lock makes concurrent starts safe. */
export async function migrateSimulator(db: Kysely<any>, schema = DEFAULT_SCHEMA): Promise<string[]> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid simulator schema name: ${schema}`);
  const migrator = new Migrator({ db, provider: new SchemaSqlProvider(schema), migrationTableSchema: schema });
  const { error, results } = await retryingCatalogRaces(() => migrator.migrateToLatest());
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`processor simulator migration failed${failed ? ` (in ${failed.migrationName})` : ''}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
