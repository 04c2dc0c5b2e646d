import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { connectPostgres, openPglite, type DatabaseHandle } from '../src/db/client.js';
import { MIGRATIONS_DIR } from '../src/db/migrate.js';
import { runSchemaName } from './helpers.js';

/**
 * A database of a test's own, not yet migrated: a fresh schema on PostgreSQL (dropped by
 * `drop`, and by the run's teardown), a fresh embedded one otherwise. Unlike the run's
 * database, no other test file creates tables in it.
 */
export async function freshDatabase(purpose: string, poolMax = 2, statementTimeoutMs = 60_000): Promise<{ handle: DatabaseHandle; drop: () => Promise<void> }> {
  const postgresUrl = inject('postgresUrl');
  if (!postgresUrl) return { handle: await openPglite({}), drop: async () => {} };
  const schema = runSchemaName(purpose);
  const base = new URL(postgresUrl);
  base.searchParams.delete('options');
  const admin = connectPostgres({ url: base.toString(), poolMax: 1, statementTimeoutMs: 60_000 });
  await admin.db.schema.createSchema(schema).execute();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    handle: connectPostgres({ url: url.toString(), poolMax, statementTimeoutMs }),
    drop: async () => {
      await admin.db.schema.dropSchema(schema).cascade().execute();
      await admin.close();
    },
  };
}

/** The service's migrations numbered below `number`, in a directory of their own. */
export function migrationsBefore(number: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tribes-${number}-`));
  for (const file of fs.readdirSync(MIGRATIONS_DIR)) if (/^\d{4}_/.test(file) && file < number) fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(dir, file));
  return dir;
}
