/**
 * Simple creator reads, the real server against the bare stack (issue #16), on PostgreSQL.
 *
 *   npm run bench:reads                                   # 10,000 members, 8 s per run, 3 rounds
 *   BENCH_SCENARIOS=tier,community BENCH_ROUNDS=5 npm run bench:reads
 *   BENCH_KEEP=1 npm run bench:reads, then BENCH_DB=<the name it prints> npm run bench:reads   # rerun without seeding
 *
 * Seeds a throw-away database (bench/seed-members.ts: one creator, three communities, five
 * tiers, BENCH_MEMBERS members with ~1.2 subscriptions each), then starts two servers on it:
 * the real one (bench/server.ts: rate limit raised out of the way but on, as are auth,
 * request ids, metrics and response serialization) and bench/bare-server.ts (Fastify +
 * node-postgres, the key lookup and the row, nothing else), both with a pool of 8. Each
 * scenario runs BENCH_ROUNDS times, bare and real alternating (the order flips every round),
 * each run after a BENCH_WARMUP s warm-up, at BENCH_CONNECTIONS (default 20) for
 * BENCH_DURATION s:
 *
 *   tier           GET /api/v1/tiers/:id
 *   community      GET /api/v1/communities/:id
 *   subscription   GET /api/v1/subscriptions/:id
 *   subscriptions  GET /api/v1/subscriptions?limit=20
 *
 * Printed per scenario: the median req/s and p50/p99 of each server, the throughput ratio
 * real/bare (goal ≥ 0.70) and the p99 ratio (goal ≤ 1.5), and the real server's RSS (peak
 * while loaded; goal ≤ 250 MB). A missed goal is reported, not fatal; any non-2xx answer
 * fails the run after printing. One JSON document on stdout.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { seedMembers, type MembersFixture } from './seed-members.js';
import { benchDatabase, cpuReader, measuredRun, memMb, resetPeakRss } from './server.js';
import { env, int, onlyScenarios, runBench, flag } from './knobs.js';

const members = int('BENCH_MEMBERS', 10_000);
const duration = int('BENCH_DURATION', 8);
const warmup = int('BENCH_WARMUP', 2);
const rounds = int('BENCH_ROUNDS', 3);
const connections = int('BENCH_CONNECTIONS', 20);
const port = int('BENCH_PORT', 3901);
const barePort = port + 1;
const only = onlyScenarios();

const GOAL_RATIO = 0.7;
const GOAL_P99 = 1.5;
const GOAL_RSS_MB = 250;

interface Fixture extends MembersFixture {
  subscription_id: string;
}

async function startBare(databaseUrl: string): Promise<ChildProcess> {
  // Bundled like the real server (npm start), so neither pays for tsx's loader at run time.
  const built = spawnSync('node_modules/.bin/esbuild', ['bench/bare-server.ts', '--bundle', '--platform=node', '--target=node20', '--format=esm', '--packages=external', '--outfile=.tmp/bare-server.mjs', '--log-level=warning'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building bench/bare-server.ts failed');
  const child = spawn('node', ['.tmp/bare-server.mjs'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...env, DATABASE_URL: databaseUrl, PORT: String(barePort), DATABASE_POOL_MAX: env.DATABASE_POOL_MAX ?? '8' },
  });
  for (let i = 0; i < 60; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${barePort}/ready`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill();
  throw new Error('the bare server did not start');
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

async function main() {
  const db = await benchDatabase('tribes_reads_bench');
  let bare: ChildProcess | undefined;
  try {
    let fixture: Fixture;
    if (db.reused) {
      fixture = JSON.parse(await readFile(db.fixtureFile, 'utf8')) as Fixture;
    } else {
      const seeded = await seedMembers(db.url, { members });
      const conn = connectPostgres({ url: db.url, poolMax: 1, statementTimeoutMs: 60_000 });
      const { rows } = await sql<{ id: string }>`select id from subscriptions where creator_id = ${seeded.creator_id} order by id limit 1`.execute(conn.db);
      await conn.close();
      fixture = { ...seeded, subscription_id: rows[0]!.id };
      if (flag('BENCH_KEEP')) {
        await mkdir('.tmp', { recursive: true });
        await writeFile(db.fixtureFile, JSON.stringify(fixture));
        console.error(`kept database ${db.name}; rerun with BENCH_DB=${db.name}`);
      }
    }

    const server = await db.startServer(port);
    bare = await startBare(db.url);
    const serverPid = server.pid!;
    const targets = { real: cpuReader(serverPid, db.name), bare: cpuReader(bare.pid!, db.name) };

    const scenarios: Array<[string, string]> = [
      ['tier', `/api/v1/tiers/${fixture.tier_ids[0]}`],
      ['community', `/api/v1/communities/${fixture.community_ids[0]}`],
      ['subscription', `/api/v1/subscriptions/${fixture.subscription_id}`],
      ['subscriptions', '/api/v1/subscriptions?limit=20'],
    ];
    const headers = { authorization: `Bearer ${fixture.api_key}` };
    const failures: string[] = [];
    const results: Record<string, unknown> = {};
    const rssSamples: number[] = [];
    resetPeakRss(serverPid);
    const sampler = setInterval(() => rssSamples.push(memMb(serverPid, 'VmRSS') ?? 0), 200);

    for (const [name, path] of scenarios) {
      if (only && !only.has(name)) continue;
      for (const which of ['real', 'bare'] as const) {
        const res = await fetch(`http://127.0.0.1:${which === 'real' ? port : barePort}${path}`, { headers });
        if (res.status !== 200) throw new Error(`${which} ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      }
      const runs: Record<'real' | 'bare', Array<Awaited<ReturnType<typeof measuredRun>>>> = { real: [], bare: [] };
      for (let r = 0; r < rounds; r++) {
        for (const which of r % 2 ? (['real', 'bare'] as const) : (['bare', 'real'] as const)) {
          const url = `http://127.0.0.1:${which === 'real' ? port : barePort}${path}`;
          if (warmup > 0) await measuredRun(targets[which], { url, connections, duration: warmup, headers });
          const run = await measuredRun(targets[which], { url, connections, duration, headers });
          if (run.non_2xx || run.errors || run.timeouts) failures.push(`${name} ${which}: ${run.non_2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts`);
          runs[which].push(run);
          console.error(`${name} ${which}: ${run.req_per_s} req/s, p50 ${run.latency_ms.p50} ms, p99 ${run.latency_ms.p99} ms, cpu/req ${JSON.stringify(run.cpu_ms_per_request)}`);
        }
      }
      const summary = (which: 'real' | 'bare') => ({
        req_per_s: median(runs[which].map((x) => x.req_per_s)),
        p50_ms: median(runs[which].map((x) => x.latency_ms.p50)),
        p99_ms: median(runs[which].map((x) => x.latency_ms.p99)),
        server_cpu_ms_per_request: median(runs[which].map((x) => x.cpu_ms_per_request.server ?? 0)),
        postgres_cpu_ms_per_request: median(runs[which].map((x) => x.cpu_ms_per_request.postgres ?? 0)),
        runs: runs[which].map((x) => x.req_per_s),
      });
      // The real server's peak RSS while this scenario ran (reset before the next one).
      const scenarioPeak = memMb(serverPid, 'VmHWM');
      resetPeakRss(serverPid);
      const real = { ...summary('real'), peak_rss_mb: scenarioPeak };
      const bareSummary = summary('bare');
      const ratio = round2(real.req_per_s / bareSummary.req_per_s);
      const p99Ratio = round2(real.p99_ms / Math.max(bareSummary.p99_ms, 1));
      results[name] = { path, real, bare: bareSummary, throughput_ratio: ratio, p99_ratio: p99Ratio, goal_met: ratio >= GOAL_RATIO && p99Ratio <= GOAL_P99 };
      console.error(`${name}: ratio ${ratio} (goal ≥ ${GOAL_RATIO}), p99 ratio ${p99Ratio} (goal ≤ ${GOAL_P99}), real server peak RSS ${scenarioPeak} MB`);
    }
    clearInterval(sampler);
    const peaks = Object.values(results).map((r) => (r as { real: { peak_rss_mb?: number } }).real.peak_rss_mb ?? 0);
    const peak = peaks.length ? Math.max(...peaks) : memMb(serverPid, 'VmHWM');
    const rss = { peak_mb: peak ?? Math.max(...rssSamples), median_loaded_mb: median(rssSamples.filter((x) => x > 0)), goal_mb: GOAL_RSS_MB };
    console.log(JSON.stringify({ members, connections, duration_s: duration, rounds, scenarios: results, real_server_rss: rss }, null, 2));
    const missed = Object.entries(results).filter(([, r]) => !(r as { goal_met: boolean }).goal_met).map(([n]) => n);
    if (missed.length) console.error(`goal not met: ${missed.join(', ')}`);
    if (rss.peak_mb > GOAL_RSS_MB) console.error(`RSS goal not met: peak ${rss.peak_mb} MB`);
    if (failures.length) throw new Error(failures.join('\n'));
  } finally {
    if (bare && bare.exitCode === null) {
      const exited = new Promise((r) => bare!.once('exit', r));
      bare.kill('SIGTERM');
      await exited;
    }
    await db.close();
  }
}

runBench(main);
