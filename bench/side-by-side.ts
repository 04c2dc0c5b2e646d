/**
 * Tribes against Ghost on the same page, measured alternately (issue #32: the member list's
 * first page at ≥ 40× Ghost's).
 *
 *   bash bench/ghost/setup.sh                              # once: Ghost 5.130.6 on MariaDB, 10,000 members
 *   BENCH_KEEP=1 BENCH_MEMBERS=20000 BENCH_SCENARIOS=small npm run bench:members   # once: a kept Tribes database
 *   BENCH_DB=<the name it printed> npm run bench:ghost     # 3 rounds of 10 s each
 *
 * Each round measures, back to back: Ghost's Admin API `GET /ghost/api/admin/members/?limit=50`
 * (10,000 members, Admin API key JWT made fresh for every run), started by
 * bench/ghost/start.sh and stopped again by bench/ghost/stop.sh; then Tribes'
 * `GET /api/v1/members?limit=50` for the small creator of the kept database (10,000 members),
 * as `npm run bench:members` measures it with BENCH_SCENARIOS=small (its JSON read from its
 * stdout). Both with autocannon at BENCH_SMALL_CONNECTIONS (20) clients for BENCH_DURATION
 * (10) s after a BENCH_WARMUP (2) s warm-up (Ghost: BENCH_GHOST_WARMUP, 10 s); req/s is autocannon's per-second average for both.
 *
 * Why alternately, one server at a time: this machine's speed varies by ±20 % from minute to
 * minute, so Ghost measured one day and Tribes another (as docs/benchmarks.md had it) put the
 * drift into the ratio. Here each round's ratio (Tribes req/s / Ghost req/s) comes from two runs
 * a minute apart, and only one server runs at a time (Ghost is stopped before Tribes starts,
 * and Tribes' server exits before Ghost's next start), so neither takes CPU from the other.
 * The ratio is what the goal counts: ≥ 40× Ghost.
 *
 * Progress on stderr; one JSON document on stdout: per round Ghost's and Tribes' req/s, p50,
 * p99, non-2xx and CPU per request, and the ratio; the median, min and max ratio; Ghost's and
 * Node's versions; the date. Any non-2xx answer, error or timeout, from either, fails the run
 * (after printing what was measured). Knobs: BENCH_ROUNDS (3), BENCH_DURATION, BENCH_WARMUP,
 * BENCH_SMALL_CONNECTIONS, BENCH_DB (required), BENCH_GHOST_DIR (Ghost's install dir, default
 * ~/.cache/tribes-bench-ghost); the environment is passed on to bench:members as is.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuCounter, cpuMs } from './cpu.js';
import { adminApi, authHeaders, GHOST_DIR as ghostDir, inDir } from './ghost/lib.mjs';
import { env, int, runBench } from './knobs.js';
import { buildServer } from './server.js';

const rounds = int('BENCH_ROUNDS', 3);
const duration = int('BENCH_DURATION', 10);
const warmup = int('BENCH_WARMUP', 2);
/**
 * Ghost is started afresh every round, and its first requests compile its code paths: at ~15 req/s
 * Tribes' 2 s warm-up is some 30 requests, and Ghost's first rounds measured slower than its later
 * ones (12–15 against 19 req/s). A longer warm-up for Ghost keeps that out of the ratio.
 */
const ghostWarmup = int('BENCH_GHOST_WARMUP', 10);
const connections = int('BENCH_SMALL_CONNECTIONS', 20);
const script = (name: string) => fileURLToPath(new URL(`./ghost/${name}`, import.meta.url));

const GOAL_RATIO = 40;
/** Ghost refuses Admin API tokens older than 5 minutes, and autocannon sends one for the whole run. */
const MAX_GHOST_RUN_S = 290;

interface Measured {
  req_per_s: number;
  p50: number;
  p99: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  requests: number;
  cpu_ms_per_request: Record<string, number | null>;
}

/** What bench:members prints for the small creator (only the fields read here). */
interface TribesSmall {
  req_per_s: number;
  latency_ms: { p50: number; p99: number };
  requests: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  total?: number;
  cpu_ms_per_request: { server: number | null; postgres: number | null };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round1 = (x: number) => Math.round(x * 10) / 10;

/** bench/ghost/start.sh or stop.sh, their output on stderr (stdout is for the JSON). */
function ghostScript(name: 'start.sh' | 'stop.sh') {
  const r = spawnSync('bash', [script(name)], { stdio: ['ignore', 2, 2], env: { ...env, BENCH_GHOST_DIR: ghostDir } });
  if (r.status !== 0) throw new Error(`bench/ghost/${name} failed (exit ${r.status})`);
}

/** One autocannon run against Ghost, and the CPU it cost Ghost's process and the local MariaDB server. */
async function ghostRun(url: string, seconds: number, cpu: () => { server: number | undefined; mariadb: number | undefined }): Promise<Measured> {
  const before = cpu();
  const r = await autocannon({ url, connections, duration: seconds, headers: authHeaders() });
  const after = cpu();
  const perRequest = (k: 'server' | 'mariadb') =>
    before[k] === undefined || after[k] === undefined || r.requests.total === 0 ? null : Math.round(((after[k]! - before[k]!) / r.requests.total) * 100) / 100;
  return {
    req_per_s: round1(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non_2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    requests: r.requests.total,
    cpu_ms_per_request: { server: perRequest('server'), mariadb: perRequest('mariadb') },
  };
}

/** Ghost, started, probed, warmed up, measured and stopped again. */
async function measureGhost(url: string, localDb: boolean): Promise<Measured & { members: number }> {
  ghostScript('start.sh');
  try {
    const pid = Number(readFileSync(inDir('ghost.pid'), 'utf8'));
    const mariadb = localDb ? cpuCounter((_pid, cmdline) => /(^|\/)(mariadbd|mysqld) /.test(cmdline)) : () => undefined;
    const cpu = () => ({ server: cpuMs((p) => p === pid), mariadb: mariadb() });
    const res = await fetch(url, { headers: authHeaders() });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`Ghost's ${url} answered ${res.status}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { members: unknown[]; meta: { pagination: { total: number } } };
    if (body.members.length !== 50) throw new Error(`Ghost's first page holds ${body.members.length} members, not 50 (run bench/ghost/setup.sh)`);
    if (ghostWarmup > 0) await ghostRun(url, ghostWarmup, cpu);
    return { ...(await ghostRun(url, duration, cpu)), members: body.meta.pagination.total };
  } finally {
    ghostScript('stop.sh');
  }
}

/** `npm run -s bench:members` with BENCH_SCENARIOS=small (on the dist built at the start); its JSON starts at the first "{\n" of stdout (build output before it). */
async function measureTribes(): Promise<TribesSmall & { members: number | undefined }> {
  const child = spawn('npm', ['run', '-s', 'bench:members'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...env, BENCH_SCENARIOS: 'small', BENCH_SKIP_BUILD: '1' } });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  const code = await new Promise<number | null>((res) => child.on('close', res));
  const at = out.indexOf('{\n');
  let report: { small_creator_limit_50?: (TribesSmall & { probe?: unknown }) | null; failures?: string[] } | undefined;
  try {
    report = at < 0 ? undefined : JSON.parse(out.slice(at));
  } catch {
    report = undefined;
  }
  const small = report?.small_creator_limit_50;
  if (code !== 0 || !small || typeof small.req_per_s !== 'number') {
    const why = report?.failures?.length ? report.failures.join('; ') : small?.probe ? JSON.stringify(small.probe) : out.slice(-500);
    throw new Error(`npm run bench:members (BENCH_SCENARIOS=small) exited ${code}: ${why}`);
  }
  return { ...small, members: small.total };
}

async function main() {
  const db = env.BENCH_DB;
  if (!db) {
    throw new Error(
      'BENCH_DB is required: the name of a kept Tribes bench database. Make one with\n' +
        '  BENCH_KEEP=1 BENCH_MEMBERS=20000 BENCH_SCENARIOS=small npm run bench:members\n' +
        'and rerun with BENCH_DB=<the name it prints>.',
    );
  }
  if (!existsSync(`.tmp/${db}.json`)) throw new Error(`BENCH_DB=${db}: no fixture .tmp/${db}.json here (run from the repo root, with a database kept by BENCH_KEEP=1)`);
  if (duration > MAX_GHOST_RUN_S) throw new Error(`BENCH_DURATION=${duration}: at most ${MAX_GHOST_RUN_S} s (Ghost refuses an Admin API token after 5 minutes)`);
  const configFile = inDir('config.production.json');
  if (!existsSync(configFile) || !existsSync(inDir('admin-key.json'))) throw new Error(`no set-up Ghost in ${ghostDir} (BENCH_GHOST_DIR): run bash bench/ghost/setup.sh`);
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as { database: { connection: { host?: string } } };
  const url = `${adminApi()}/members/?limit=50`;
  const localDb = ['127.0.0.1', 'localhost', '::1'].includes(config.database.connection.host ?? 'localhost');
  const ghostVersion = (JSON.parse(readFileSync(inDir('current', 'package.json'), 'utf8')) as { version: string }).version;
  // Both servers run the `node` on PATH (start.sh; bench/server.ts).
  const nodeVersion = execFileSync('node', ['-v'], { encoding: 'utf8' }).trim();
  const date = new Date().toISOString();

  // Ctrl-C or SIGTERM while Ghost runs: stop it (it runs detached and would outlive this process).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${signal}: stopping Ghost`);
      spawnSync('bash', [script('stop.sh')], { stdio: ['ignore', 2, 2], env: { ...env, BENCH_GHOST_DIR: ghostDir } });
      process.exit(130);
    });
  }

  // Built once here, not by every round's bench:members (BENCH_SKIP_BUILD): ~10 s a round saved.
  buildServer();
  console.error(`Ghost ${ghostVersion} (${ghostDir}) against Tribes (BENCH_DB=${db}): ${rounds} round(s), ${connections} connections, ${warmup} s warm-up (Ghost ${ghostWarmup} s) + ${duration} s each`);
  const results: Array<{ round: number; ghost: Measured; tribes: Omit<Measured, 'requests'>; ratio: number }> = [];
  const failures: string[] = [];
  const members = { ghost: undefined as number | undefined, tribes: undefined as number | undefined };
  for (let round = 1; round <= rounds && failures.length === 0; round++) {
    console.error(`round ${round}/${rounds}: Ghost`);
    const { members: ghostMembers, ...ghost } = await measureGhost(url, localDb);
    members.ghost = ghostMembers;
    console.error(`round ${round}/${rounds}: Ghost ${ghost.req_per_s} req/s, p50 ${ghost.p50} ms, p99 ${ghost.p99} ms, cpu/req ${JSON.stringify(ghost.cpu_ms_per_request)}`);
    if (ghost.non_2xx || ghost.errors || ghost.timeouts) failures.push(`round ${round} Ghost: ${ghost.non_2xx} non-2xx, ${ghost.errors} errors, ${ghost.timeouts} timeouts`);

    console.error(`round ${round}/${rounds}: Tribes (npm run bench:members, BENCH_SCENARIOS=small)`);
    const t = await measureTribes();
    members.tribes = t.members;
    const tribes = { req_per_s: t.req_per_s, p50: t.latency_ms.p50, p99: t.latency_ms.p99, non_2xx: t.non_2xx, errors: t.errors, timeouts: t.timeouts, cpu_ms_per_request: t.cpu_ms_per_request };
    if (t.non_2xx || t.errors || t.timeouts) failures.push(`round ${round} Tribes: ${t.non_2xx} non-2xx, ${t.errors} errors, ${t.timeouts} timeouts`);
    const ratio = round1(tribes.req_per_s / ghost.req_per_s);
    results.push({ round, ghost, tribes, ratio });
    console.error(`round ${round}/${rounds}: Tribes ${tribes.req_per_s} req/s, p50 ${tribes.p50} ms, p99 ${tribes.p99} ms: ${ratio}× Ghost (goal ≥ ${GOAL_RATIO}×)`);
  }

  const ratios = results.map((r) => r.ratio);
  const medianRatio = ratios.length ? round1(median(ratios)) : null;
  console.log(
    JSON.stringify(
      {
        date,
        ghost_version: ghostVersion,
        node_version: nodeVersion,
        ghost: { page: 'GET /ghost/api/admin/members/?limit=50', members: members.ghost ?? null, database: 'MariaDB/MySQL', install_dir: ghostDir },
        tribes: { page: 'GET /api/v1/members?limit=50 (bench:members, small creator)', members: members.tribes ?? null, database: db },
        connections,
        duration_s: duration,
        warmup_s: warmup,
        ghost_warmup_s: ghostWarmup,
        rounds: results,
        median_ratio: medianRatio,
        min_ratio: ratios.length ? Math.min(...ratios) : null,
        max_ratio: ratios.length ? Math.max(...ratios) : null,
        goal_ratio: GOAL_RATIO,
        goal_met: medianRatio !== null && medianRatio >= GOAL_RATIO,
        failures,
      },
      null,
      2,
    ),
  );
  if (failures.length > 0) throw new Error(`${failures.length} failure(s):\n  ${failures.join('\n  ')}`);
}

runBench(main);
