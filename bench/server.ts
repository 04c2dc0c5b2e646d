import { spawn, type ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { cpuMs } from './cpu.js';

/**
 * The real server (`src/server.ts`) as a child process on the bench database, tuned for load
 * (pool 8 unless DATABASE_POOL_MAX says, rate limits out of the way, no reconciliation nor metrics history, quiet
 * logs), resolved once `/ready` answers. BENCH_NODE_ARGS passes flags to node (e.g. --cpu-prof).
 */
export async function startBenchServer(databaseUrl: string, port: number): Promise<ChildProcess> {
  const env = process.env;
  const server = spawn('node', [...(env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', 'src/server.ts'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...env,
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_MAX: env.DATABASE_POOL_MAX ?? '8',
      PORT: String(port),
      PROCESSOR_SIM_PORT: '0',
      RATE_LIMIT_MAX: '10000000',
      RECONCILE_INTERVAL_MS: '0',
      METRICS_HISTORY_INTERVAL_MS: '0',
      LOG_LEVEL: 'warn',
      DATA_DIR: '.tmp/bench',
    },
  });
  try {
    await waitForReady(`http://127.0.0.1:${port}/ready`);
  } catch (err) {
    server.kill();
    throw err;
  }
  return server;
}

/** Where the CPU goes, in ms so far: the server process and this database's PostgreSQL backends. */
export function cpuReader(serverPid: number, dbName: string) {
  return () => ({
    server: cpuMs((pid) => pid === serverPid),
    postgres: cpuMs((_pid, cmdline) => cmdline.startsWith('postgres:') && cmdline.includes(` ${dbName} `)),
  });
}

async function waitForReady(url: string) {
  for (let i = 0; i < 120; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the server did not become ready');
}

/**
 * The database a bench runs on: a fresh `<prefix>_<time>` on BENCH_DATABASE_URL's server, or
 * the one BENCH_DB names (kept by an earlier BENCH_KEEP=1 run, its fixture in .tmp/<name>.json).
 * `close` stops the bench server if one was started and drops the database unless it is kept;
 * Ctrl-C or SIGTERM does the same before exiting.
 */
export async function benchDatabase(prefix: string) {
  const env = process.env;
  const serverUrl = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const reuse = env.BENCH_DB;
  const name = reuse ?? `${prefix}_${Date.now()}`;
  const admin = connectPostgres({ url: serverUrl, poolMax: 1, statementTimeoutMs: 60_000 });
  if (!reuse) await sql.raw(`create database ${name}`).execute(admin.db);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let server: ChildProcess | undefined;
  let closed = false;
  const handle = {
    name,
    url: url.toString(),
    /** Seeded by an earlier run: read its fixture instead of seeding. */
    reused: reuse !== undefined,
    kept: Boolean(env.BENCH_KEEP || reuse),
    fixtureFile: `.tmp/${name}.json`,
    async startServer(port: number) {
      server = await startBenchServer(url.toString(), port);
      return server;
    },
    async close() {
      if (closed) return;
      closed = true;
      // A server that already died (bad config) has nothing to wait for.
      if (server?.pid && server.exitCode === null) {
        const exited = new Promise((r) => server!.once('exit', r));
        server.kill('SIGTERM');
        await exited;
      }
      if (!env.BENCH_KEEP && !reuse) await sql.raw(`drop database if exists ${name} with (force)`).execute(admin.db);
      await admin.close();
    },
  };
  // Ctrl-C mid-run still stops the server and drops the database.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${signal}: cleaning up`);
      void handle.close().finally(() => process.exit(130));
    });
  }
  return handle;
}
