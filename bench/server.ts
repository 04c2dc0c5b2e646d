import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { cpuCounter, cpuMs } from './cpu.js';
import { flag } from './knobs.js';

/** `npm run build` (dist/server.mjs), its output on stderr so a bench's stdout stays its JSON. */
export function buildServer(): void {
  if (spawnSync('npm', ['run', '--silent', 'build'], { stdio: ['ignore', 2, 2] }).status !== 0) throw new Error('npm run build failed');
}

/**
 * The real server as `npm start` runs it (src/server.ts bundled into dist/server.mjs, built
 * here first) as a child process on the bench database, tuned for load (pool 8 unless
 * DATABASE_POOL_MAX says, rate limits out of the way, no reconciliation nor metrics history,
 * quiet logs), resolved once `/ready` answers. BENCH_SKIP_BUILD=1 starts the dist/server.mjs
 * already built (a caller that built it once, e.g. bench:ghost's rounds). BENCH_NODE_ARGS passes flags to node (e.g.
 * --cpu-prof).
 */
export async function startBenchServer(databaseUrl: string, port: number): Promise<ChildProcess> {
  const env = process.env;
  if (!flag('BENCH_SKIP_BUILD')) buildServer();
  const server = spawn('node', [...(env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), 'dist/server.mjs'], {
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
  const postgres = cpuCounter((_pid, cmdline) => cmdline.startsWith('postgres:') && cmdline.includes(` ${dbName} `));
  return () => ({
    server: cpuMs((pid) => pid === serverPid),
    postgres: postgres(),
  });
}

/**
 * One autocannon run and what it cost: req/s (autocannon's per-second average, or `total` /
 * duration for a run of a fixed number of slow requests), latency percentiles, what failed,
 * and the CPU per request of the server, of PostgreSQL and of this process (the load generator).
 */
export async function measuredRun(cpu: ReturnType<typeof cpuReader>, options: Record<string, unknown>, rate: 'average' | 'total' = 'average') {
  const before = cpu();
  const self = process.cpuUsage();
  const result = await autocannon(options);
  const used = process.cpuUsage(self);
  const after = cpu();
  const total = result.requests.total as number;
  const perOne = (ms: number) => (total === 0 ? null : Math.round((ms / total) * 100) / 100);
  const perRequest = (k: keyof typeof before) => (before[k] === undefined || after[k] === undefined ? null : perOne(after[k]! - before[k]!));
  return {
    req_per_s: Math.round((rate === 'total' ? result.requests.total / result.duration : result.requests.average) * 10) / 10,
    latency_ms: { p50: result.latency.p50, p97_5: result.latency.p97_5, p99: result.latency.p99, max: result.latency.max },
    requests: total,
    non_2xx: result.non2xx as number,
    errors: result.errors as number,
    timeouts: result.timeouts as number,
    cpu_ms_per_request: {
      server: perRequest('server'),
      postgres: perRequest('postgres'),
      // This process: autocannon, on the same cores, sending and parsing every answer.
      load_generator: perOne((used.user + used.system) / 1000),
    },
  };
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
    kept: Boolean(flag('BENCH_KEEP') || reuse),
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
      if (!flag('BENCH_KEEP') && !reuse) await sql.raw(`drop database if exists ${name} with (force)`).execute(admin.db);
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

/** VmRSS / VmHWM of a process in MB, from /proc (undefined off Linux or once it exited). */
export function memMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** Resets the peak RSS (VmHWM) of a process (Linux: "5" into clear_refs); false when not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
