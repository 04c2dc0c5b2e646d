import { spawn, type ChildProcess } from 'node:child_process';
import { cpuMs } from './cpu.js';

/**
 * The real server (`src/server.ts`) as a child process on the bench database, tuned for load
 * (pool 8 unless DATABASE_POOL_MAX says, rate limits out of the way, no reconciliation, quiet
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
