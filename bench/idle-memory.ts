/**
 * Memory of `npm start` on the embedded database (PGlite), as a laptop sees it:
 *
 *   npm run bench:memory                    # 3 runs, medians
 *   BENCH_RUNS=5 npm run bench:memory
 *   BENCH_LOAD=none npm run bench:memory    # idle only, no "after the demo" load
 *   BENCH_LOAD=requests npm run bench:memory   # a lighter load than the demo (below)
 *   BENCH_NODE_ARGS=--trace-gc npm run bench:memory
 *
 * Each run builds nothing (the build happens once, first), then starts `node dist/server.mjs`
 * the way `npm start` does, on a fresh temporary DATA_DIR, waits for /health, lets it settle
 * and reads VmRSS (resident now) and VmHWM (peak so far) from /proc/<pid>/status: "fresh".
 * It stops the server (SIGTERM) and starts it again on the same, now initialized, data
 * directory: "existing". Then `npm run demo` (scripts/demo.ts, a fixed seed) against that
 * process: "after demo". BENCH_LOAD=requests replaces the demo with a lighter load: a creator,
 * a community, a tier, members who sign up and pay through the simulator's hosted checkout,
 * and a few hundred reads (catalog, subscriptions, members, discovery). Linux only (/proc).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { memMb } from './server.js';
import { env, int, runBench } from './knobs.js';

const runs = int('BENCH_RUNS', 3);
const settleMs = int('BENCH_SETTLE_MS', 3000);
const load = env.BENCH_LOAD ?? 'demo';
const demoMembers = int('BENCH_DEMO_MEMBERS', 10);
const demoReads = int('BENCH_DEMO_READS', 300);

interface Sample {
  rss: number;
  hwm: number;
  startMs: number;
}

/** A port nobody listens on right now (the server's PORT=0 would work too, but then its log would have to be parsed). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Running {
  proc: ChildProcess;
  base: string;
  simBase: string;
  startMs: number;
}

async function start(dataDir: string): Promise<Running> {
  const [port, simPort] = [await freePort(), await freePort()];
  const started = Date.now();
  const proc = spawn('node', [...(env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), 'dist/server.mjs'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...env,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      PORT: String(port),
      PROCESSOR_SIM_PORT: String(simPort),
      LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
      RATE_LIMIT_SIGNUPS_PER_HOUR: '100000',
    },
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`the server exited with ${proc.exitCode}`);
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 600) throw new Error('the server did not answer /health within 60 s');
    await sleep(100);
  }
  return { proc, base, simBase: `http://127.0.0.1:${simPort}`, startMs: Date.now() - started };
}

async function sample(r: Running): Promise<Sample> {
  await sleep(settleMs);
  const rss = memMb(r.proc.pid!, 'VmRSS');
  const hwm = memMb(r.proc.pid!, 'VmHWM');
  if (rss === undefined || hwm === undefined) throw new Error('no /proc/<pid>/status (Linux only)');
  return { rss, hwm, startMs: r.startMs };
}

async function stop(r: Running): Promise<void> {
  if (r.proc.exitCode !== null) return;
  const exited = new Promise((resolve) => r.proc.once('exit', resolve));
  r.proc.kill('SIGTERM');
  await exited;
}

async function call(method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as { data: any }) : { data: undefined };
}

/** `npm run demo` against the running server, its output dropped. */
async function runDemoScript(r: Running, dataDir: string): Promise<void> {
  const demo = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--seed', '7'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...env, DATA_DIR: dataDir, TRIBES_URL: r.base, PROCESSOR_SIM_URL: r.simBase },
  });
  let stderr = '';
  demo.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const code = await new Promise((resolve) => demo.once('exit', resolve));
  if (code !== 0) throw new Error(`npm run demo failed (${String(code)}): ${stderr}`);
}

/** What a first look at the product does: set up a creator, take paying members, browse. */
async function requests(r: Running, dataDir: string): Promise<void> {
  const admin = { authorization: `Bearer ${readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim()}` };
  const made = await call('POST', `${r.base}/api/v1/admin/creators`, admin, { name: 'Maria Silva', email: `maria-${Date.now()}@example.com` });
  const creator = { authorization: `Bearer ${made.data.api_key}` };
  // A new account takes no charges until its creator onboards (the simulator's helper: pressing Continue).
  await call('POST', `${r.simBase}/v1/test_helpers/accounts/${made.data.creator.processor_account_id}/onboard`, {}, {});
  const community = await call('POST', `${r.base}/api/v1/communities`, creator, { name: 'Força Total', slug: `forca-${Date.now()}`, category: 'musculacao' });
  const tier = await call('POST', `${r.base}/api/v1/tiers`, creator, { community_id: community.data.id, name: 'Pro', price_cents: 4990, billing_period: 'monthly' });
  const members: Array<Record<string, string>> = [];
  for (let i = 0; i < demoMembers; i++) {
    const signup = await call('POST', `${r.base}/api/v1/member/signup`, {}, { name: `Member ${i}`, email: `m${i}-${Date.now()}@example.com`, password: 'long enough password' });
    const member = { authorization: `Bearer ${signup.data.token}` };
    members.push(member);
    const checkout = await call('POST', `${r.base}/api/v1/member/checkout-sessions`, member, { tier_id: tier.data.id });
    await call('POST', `${r.simBase}/v1/test_helpers/checkout_sessions/${checkout.data.processor_session_id}/complete`, { authorization: 'Bearer sk_test_tribes' }, {
      payment_method: 'pm_card_visa',
    });
  }
  const reads: Array<[string, Record<string, string>]> = [
    [`${r.base}/api/v1/exercises?limit=100`, creator],
    [`${r.base}/api/v1/subscriptions`, creator],
    [`${r.base}/api/v1/members`, creator],
    [`${r.base}/api/v1/communities`, creator],
    [`${r.base}/api/v1/discover/communities`, {}],
    [`${r.base}/openapi.json`, {}],
    ...members.slice(0, 3).map((m): [string, Record<string, string>] => [`${r.base}/api/v1/member/subscriptions`, m]),
  ];
  for (let i = 0; i < demoReads; i++) {
    const [url, headers] = reads[i % reads.length]!;
    await call('GET', url, headers);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : Math.round((s[mid - 1]! + s[mid]!) / 2);
};

async function main() {
  const built = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
  const rows: Record<'fresh' | 'existing' | 'after demo', Sample[]> = { fresh: [], existing: [], 'after demo': [] };
  for (let run = 1; run <= runs; run++) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tribes-mem-'));
    try {
      let r = await start(dataDir);
      try {
        rows.fresh.push(await sample(r));
      } finally {
        await stop(r);
      }
      r = await start(dataDir);
      try {
        rows.existing.push(await sample(r));
        if (load !== 'none') {
          const t = Date.now();
          await (load === 'requests' ? requests(r, dataDir) : runDemoScript(r, dataDir));
          rows['after demo'].push({ ...(await sample(r)), startMs: Date.now() - t });
        }
      } finally {
        await stop(r);
      }
      const last = (k: keyof typeof rows) => rows[k].at(-1);
      console.log(
        `run ${run}: ` +
          (Object.keys(rows) as Array<keyof typeof rows>)
            .filter((k) => last(k))
            .map((k) => `${k} ${last(k)!.rss}/${last(k)!.hwm} MB`)
            .join(', ') +
          ' (RSS/peak)',
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  console.log(`\nmedians of ${runs} runs (MB; settled ${settleMs} ms after /health answered)`);
  console.log('| data dir | RSS | peak RSS (VmHWM) | time (ms) |');
  console.log('|---|---:|---:|---:|');
  for (const [name, samples] of Object.entries(rows)) {
    if (samples.length === 0) continue;
    const time = `${median(samples.map((s) => s.startMs))} (${name === 'after demo' ? load : 'to /health'})`;
    console.log(`| ${name} | ${median(samples.map((s) => s.rss))} | ${median(samples.map((s) => s.hwm))} | ${time} |`);
  }
}

runBench(main);
