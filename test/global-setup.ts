import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { TestProject } from 'vitest/node';
import { connectPostgres, openPglite } from '../src/db/client.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { seedExerciseCatalog } from '../src/modules/exercises/seed.js';
import { migrateSimulator } from '../src/processor/simulator/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PostgreSQL URL whose search_path is this run's own schema, when TEST_DATABASE_URL is set. */
    postgresUrl: string | undefined;
    /**
     * This run's schema on PostgreSQL. Every other schema the run creates (a simulator's, a
     * test's own) is named `<runSchema>_…`, so that teardown drops it too, and only it.
     */
    runSchema: string | undefined;
    /** A migrated PGlite data directory that each test database is a copy of (never opened itself). */
    pgliteTemplate: string | undefined;
  }
}

/**
 * One migrated database per test run. On PostgreSQL, a fresh schema for this run (dropped
 * afterwards), so runs never see each other's tables or an older migration; on PGlite, one
 * migrated data directory that every test database copies (copying and opening it takes
 * ~0.2 + 0.4 s; loading it from PGlite's tarball took 1.2–2.5 s on a 2-core machine, since
 * the tarball is unpacked in JavaScript into an in-memory file system; migrating afresh,
 * several seconds).
 */
export default async function setup(project: TestProject) {
  const base = process.env.TEST_DATABASE_URL;
  if (base) {
    // Runs share the server's `test` database, others' runs included: the random part keeps two
    // runs started in the same millisecond (on different machines, the same pid) apart.
    const schema = `test_run_${Date.now()}_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
    const url = new URL(base);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const admin = connectPostgres({ url: base, poolMax: 1, statementTimeoutMs: 60_000 });
    await admin.db.schema.createSchema(schema).execute();
    await admin.close();
    const handle = connectPostgres({ url: url.toString(), poolMax: 1, statementTimeoutMs: 60_000 });
    await migrateToLatest(handle.db);
    await seedExerciseCatalog(handle.db);
    await handle.close();
    project.provide('postgresUrl', url.toString());
    project.provide('runSchema', schema);
    project.provide('pgliteTemplate', undefined);
    return () => dropRunSchemas(base, schema);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-test-'));
  const template = path.join(dir, 'migrated');
  const handle = await openPglite({ dataDir: template });
  await migrateToLatest(handle.db);
  await seedExerciseCatalog(handle.db);
  await migrateSimulator(handle.db);
  // Closed, so that its files are whole and consistent before anything copies them.
  await handle.close();
  project.provide('postgresUrl', undefined);
  project.provide('runSchema', undefined);
  project.provide('pgliteTemplate', template);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Drops this run's schema and the schemas named after it (`<schema>_…`: simulators', tests'),
 * by exact name or that exact prefix, never a pattern: another run's schemas are never touched,
 * and one already gone is no error.
 */
async function dropRunSchemas(base: string, schema: string): Promise<void> {
  const cleanup = connectPostgres({ url: base, poolMax: 1, statementTimeoutMs: 60_000 });
  try {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_namespace
      where nspname = ${schema} or starts_with(nspname, ${`${schema}_`})`.execute(cleanup.db);
    for (const { name } of rows) await cleanup.db.schema.dropSchema(name).ifExists().cascade().execute();
  } finally {
    await cleanup.close();
  }
}
