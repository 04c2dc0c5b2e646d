import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Run by `node --input-type=module -e`: PGlite's own first start (initdb) on the directory, then a clean close. */
const INITDB_SCRIPT = `
const [moduleUrl, dataDir, startParams] = process.argv.slice(1);
const { PGlite } = await import(moduleUrl);
const pglite = new PGlite(dataDir, { startParams: JSON.parse(startParams) });
await pglite.waitReady;
await pglite.close();
`;

/**
 * Creates a new PGlite data directory in a short-lived child process, so the serving process
 * opens an existing one.
 *
 * Why: on an empty directory PGlite runs initdb inside the opening process, on a second,
 * temporary PostgreSQL instance plus initdb's own WebAssembly module, and copies the result
 * over as an in-memory tarball. That peaks at ~800 MB, and ~110 MB of it stays resident after
 * the temporary instance is closed (freed C heap that the allocator keeps). A child process
 * hands all of it back when it exits.
 *
 * The child builds a sibling directory, renamed into place only once initdb has succeeded,
 * so a crash half-way never leaves a directory that looks initialized. A directory that is
 * already initialized, or not empty, is left alone. Throws when the child could not do it (no
 * usable node binary, a module loader without `import.meta.resolve`, initdb failing): the
 * caller then opens the directory as before and PGlite runs initdb in-process, with more
 * memory and the same result (or the same error).
 */
export async function initPgliteDataDir(dataDir: string, startParams: string[]): Promise<void> {
  if (fs.existsSync(path.join(dataDir, 'PG_VERSION'))) return;
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) return;
  const moduleUrl = import.meta.resolve('@electric-sql/pglite');
  const staging = `${dataDir}.initdb-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  try {
    await execFileAsync(process.execPath, ['--input-type=module', '-e', INITDB_SCRIPT, moduleUrl, staging, JSON.stringify(startParams)], {
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    if (!fs.existsSync(path.join(staging, 'PG_VERSION'))) throw new Error('initdb left no PG_VERSION');
    // rename() replaces an empty directory on Linux only.
    if (fs.existsSync(dataDir)) fs.rmdirSync(dataDir);
    fs.renameSync(staging, dataDir);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
