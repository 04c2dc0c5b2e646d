/**
 * Load test of the creator's member directory (GET /api/v1/members) on PostgreSQL, at a
 * million members.
 *
 *   npm run bench:members                          # 1,000,000 members, 10 s per scenario
 *   BENCH_MEMBERS=100000 npm run bench:members     # smaller
 *   BENCH_KEEP=1 npm run bench:members, then BENCH_DB=<the name it prints> npm run bench:members   # rerun without seeding
 *   BENCH_SCENARIOS=q_common,sort_name npm run bench:members   # only these list scenarios
 *
 * Seeds a fresh database (BENCH_DATABASE_URL's server, database `tribes_members_bench_<time>`,
 * dropped afterwards unless kept) through bench/seed-members.ts: one creator with
 * BENCH_MEMBERS members and a second, small one (BENCH_SMALL_MEMBERS). Starts the real server
 * on it as a child process, then drives the list with autocannon, one scenario at a time
 * (filters, searches, orders, a deep page), each after a short warm-up; exports the big
 * creator's directory as CSV once (time and the server's peak RSS meanwhile); and lists the
 * small creator's 50 newest members. Every response must be 2xx: any other fails the run
 * (after printing the results). One JSON document on stdout.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { benchDatabase, cpuReader, measuredRun, memMb, resetPeakRss } from './server.js';
import { RARE_QUERY, seedMembers, type MembersFixture } from './seed-members.js';
import { env, int, onlyScenarios, runBench, flag } from './knobs.js';

const members = int('BENCH_MEMBERS', 1_000_000);
const smallMembers = int('BENCH_SMALL_MEMBERS', 10_000);
const duration = int('BENCH_DURATION', 10);
const warmup = int('BENCH_WARMUP', 2);
const connections = int('BENCH_CONNECTIONS', 10);
const smallConnections = int('BENCH_SMALL_CONNECTIONS', 20);
const port = int('BENCH_PORT', 3901);
const only = onlyScenarios();

interface Fixture {
  members: number;
  small_members: number;
  main: MembersFixture;
  small: MembersFixture;
}

interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
  total_is_estimate: boolean;
}

const DAY_MS = 86_400_000;

function scenarios(f: MembersFixture): Array<[string, string]> {
  const joinedAfter = new Date(Date.now() - 91 * DAY_MS).toISOString().slice(0, 10);
  return [
    ['no_filter', ''],
    ['community', `community_id=${f.community_ids[0]}`],
    ['tier', `tier_id=${f.tier_ids[0]}`],
    ['status_active', 'status=active'],
    ['status_trial', 'status=trial'],
    ['status_at_risk', 'status=at_risk'],
    ['status_churned', 'status=churned'],
    ['joined_after', `joined_after=${joinedAfter}`],
    ['q_common', 'q=silva'],
    ['q_rare', `q=${RARE_QUERY}`],
    ['sort_last_active_desc', 'sort=-last_active_at'],
    ['sort_name', 'sort=name'],
    ['page_500', 'page=500&limit=20'],
  ];
}

async function main() {
  // BENCH_DB=<name of a database kept by BENCH_KEEP=1> reruns the load on it without seeding.
  const db = await benchDatabase('tribes_members_bench');
  const { name: dbName, fixtureFile } = db;
  const url = db.url;
  try {
    let fixture: Fixture;
    let seedSeconds: number | null = null;
    if (db.reused) {
      fixture = JSON.parse(await readFile(fixtureFile, 'utf8')) as Fixture;
    } else {
      const started = Date.now();
      // The small creator first: the big one's seed then compacts and analyzes everything once.
      const small = await seedMembers(url, { members: smallMembers });
      const main = await seedMembers(url, { members });
      seedSeconds = Math.round((Date.now() - started) / 1000);
      fixture = { members, small_members: smallMembers, main, small };
      console.error(`seeded ${members} + ${smallMembers} members in ${seedSeconds} s`);
      if (flag('BENCH_KEEP')) {
        await mkdir('.tmp', { recursive: true });
        await writeFile(fixtureFile, JSON.stringify(fixture));
        console.error(`kept database ${dbName}; rerun with BENCH_DB=${dbName} (fixture in ${fixtureFile})`);
      }
    }

    const server = await db.startServer(port);
    const base = `http://127.0.0.1:${port}`;
    const serverPid = server.pid!;
    const cpu = cpuReader(serverPid, dbName);

    const failures: string[] = [];
    const probe = async (key: string, query: string) => {
      const started = performance.now();
      const res = await fetch(`${base}/api/v1/members${query ? `?${query}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
      const text = await res.text();
      const ms = Math.round((performance.now() - started) * 10) / 10;
      if (res.status !== 200) return { status: res.status, ms, body: text.slice(0, 300) };
      const body = JSON.parse(text) as { data: unknown[]; pagination: Pagination };
      return { status: 200, ms, rows: body.data.length, total: body.pagination.total, total_is_estimate: body.pagination.total_is_estimate };
    };
    const load = (key: string, query: string, conns: number, seconds: number) =>
      measuredRun(cpu, {
        url: `${base}/api/v1/members${query ? `?${query}` : ''}`,
        connections: conns,
        duration: seconds,
        headers: { authorization: `Bearer ${key}` },
      });

    // The route must answer before anything is measured.
    const first = await probe(fixture.main.api_key, '');
    if (first.status !== 200) throw new Error(`GET /api/v1/members answered ${first.status}: ${first.body}`);

    const results: Record<string, unknown> = {};
    for (const [name, query] of scenarios(fixture.main)) {
      if (only && !only.has(name)) continue;
      const p = await probe(fixture.main.api_key, query);
      if (p.status !== 200) {
        failures.push(`${name}: probe answered ${p.status}: ${p.body}`);
        results[name] = { query, probe: p };
        continue;
      }
      if (warmup > 0) await load(fixture.main.api_key, query, connections, warmup);
      const r = await load(fixture.main.api_key, query, connections, duration);
      if (r.non_2xx || r.errors || r.timeouts) failures.push(`${name}: ${r.non_2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
      results[name] = { query, total_is_estimate: p.total_is_estimate, total: p.total, rows: p.rows, probe_ms: p.ms, ...r };
      console.error(`${name}: ${r.req_per_s} req/s, p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms`);
    }

    // The whole directory as CSV, once: time, size, and the server's memory meanwhile.
    let exportResult: Record<string, unknown> | undefined;
    if (!only || only.has('export')) {
      const rssBefore = memMb(serverPid, 'VmRSS');
      const hwmReset = resetPeakRss(serverPid);
      let sampledPeak = rssBefore ?? 0;
      const sampler = setInterval(() => {
        sampledPeak = Math.max(sampledPeak, memMb(serverPid, 'VmRSS') ?? 0);
      }, 50);
      const started = performance.now();
      let firstByteS: number | undefined;
      let bytes = 0;
      let lines = 0;
      let status = 0;
      try {
        const res = await fetch(`${base}/api/v1/members/export.csv`, { headers: { authorization: `Bearer ${fixture.main.api_key}` } });
        status = res.status;
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          firstByteS ??= (performance.now() - started) / 1000;
          bytes += chunk.byteLength;
          for (const b of chunk) if (b === 10) lines++;
        }
      } finally {
        clearInterval(sampler);
      }
      const seconds = (performance.now() - started) / 1000;
      const hwm = memMb(serverPid, 'VmHWM');
      if (status !== 200) failures.push(`export: answered ${status}`);
      // Header plus one line per member, when complete.
      if (status === 200 && lines !== fixture.members + 1) failures.push(`export: ${lines} lines for ${fixture.members} members (an error mid-stream?)`);
      exportResult = {
        status,
        seconds: Math.round(seconds * 10) / 10,
        first_byte_s: firstByteS === undefined ? null : Math.round(firstByteS * 100) / 100,
        mb: Math.round((bytes / 1048576) * 10) / 10,
        lines,
        server_rss_mb: { before: rssBefore ?? null, peak: hwmReset ? (hwm ?? null) : sampledPeak, peak_measured_by: hwmReset ? 'VmHWM after reset' : 'VmRSS sampled every 50 ms' },
      };
      console.error(`export: ${JSON.stringify(exportResult)}`);
    }

    // The small creator: 50 newest members, more clients.
    let small: Record<string, unknown> | undefined;
    if (!only || only.has('small')) {
      const query = 'limit=50';
      const p = await probe(fixture.small.api_key, query);
      if (p.status !== 200) {
        failures.push(`small: probe answered ${p.status}: ${p.body}`);
        small = { query, probe: p };
      } else {
        if (warmup > 0) await load(fixture.small.api_key, query, smallConnections, warmup);
        const r = await load(fixture.small.api_key, query, smallConnections, duration);
        if (r.non_2xx || r.errors || r.timeouts) failures.push(`small: ${r.non_2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
        small = { query, members: fixture.small_members, connections: smallConnections, total_is_estimate: p.total_is_estimate, total: p.total, rows: p.rows, ...r };
      }
    }

    console.log(
      JSON.stringify(
        {
          database: dbName,
          kept: db.kept,
          members: fixture.members,
          seed_s: seedSeconds,
          connections,
          duration_s: duration,
          warmup_s: warmup,
          database_pool_max: Number(env.DATABASE_POOL_MAX ?? 8),
          scenarios: results,
          export_csv: exportResult ?? null,
          small_creator_limit_50: small ?? null,
          failures,
        },
        null,
        2,
      ),
    );
    if (failures.length > 0) throw new Error(`${failures.length} scenario(s) failed:\n  ${failures.join('\n  ')}`);
  } finally {
    await db.close();
  }
}

runBench(main);
