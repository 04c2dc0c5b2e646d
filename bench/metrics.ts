/**
 * Load test of the creator metrics (issue: the dashboard at a million subscriptions) on PostgreSQL.
 *
 *   npm run bench:metrics                                  # 833,334 members ≈ 1,000,000 subscriptions, 10 s per run
 *   BENCH_MEMBERS=100000 npm run bench:metrics             # smaller
 *   BENCH_KEEP=1 npm run bench:metrics, then BENCH_DB=<the name it prints> npm run bench:metrics   # rerun without seeding
 *   BENCH_SCENARIOS=summary,cohorts_12 BENCH_CONNECTIONS=1,4,16 npm run bench:metrics   # only these scenarios, these client counts
 *
 * Seeds a fresh database (BENCH_DATABASE_URL's server, database `tribes_metrics_bench_<time>`,
 * dropped afterwards unless kept) through bench/seed-members.ts (~1.2 subscriptions per member,
 * hence the default member count) and bench/seed-metrics.ts (a paid invoice per billing period
 * and ~1% refunds; BENCH_PAYMENTS=0 skips them). Computes the metrics' counters as
 * reconciliation does (timed; on a kept database, a check that finds nothing to fix). Fills the daily history once with the job
 * itself (src/modules/metrics/history.ts, off in the bench server), timed: the last
 * BENCH_HISTORY_DAYS days (default 30; 90 fills history_90's whole range; 0 = everything the
 * job would backfill, up to 90 days: one pass over each scope's subscriptions whatever the
 * days, history-pass.ts), anchored by one computed row per scope the day before (each a pass: the
 * cost of a day with no stored day before it); then the last day once more, timed (`next_day`):
 * the job's steady state, each scope's day from the stored day before and its changes
 * (history-day.ts). Starts the real
 * server on it as a child process, probes each route once (200 and the shape), then drives
 * each scenario with autocannon at every count of BENCH_CONNECTIONS, each after a warm-up
 * (BENCH_WARMUP s):
 *
 *   summary      GET /api/v1/creator-metrics
 *   community    GET /api/v1/creator-metrics/:cid, the community with the most subscriptions
 *   cohorts_12   GET /api/v1/creator-metrics/cohorts?period=month&periods=12
 *   history_90   GET /api/v1/creator-metrics/history?from=<90 days ago>&to=<yesterday>
 *
 * Goals: summary p99 ≤ 50 ms, cohorts_12 p99 ≤ 200 ms, reported per connection count. A request
 * may take seconds at full size: autocannon waits BENCH_TIMEOUT s (60) and the server's
 * statement timeout is raised to 60 s (DATABASE_STATEMENT_TIMEOUT_MS; production's default is
 * 5 s, so a `max` past 5000 ms would be a 503 there), so slow answers are measured, not errors.
 * A route too slow for BENCH_MIN_REQUESTS (10) answers in BENCH_DURATION is run for that many
 * requests instead, and every run starts once the database has finished the previous one's.
 * Every response must be 2xx: any other fails the run (after printing). One JSON document on stdout.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createMetricsAggregates } from '../src/modules/metrics/aggregates.js';
import { createMetricsHistory, utcDay } from '../src/modules/metrics/history.js';
import type { Scope } from '../src/modules/metrics/metrics.repo.js';
import { seedMembers, type MembersFixture } from './seed-members.js';
import { seedPayments, type MetricsSeed } from './seed-metrics.js';
import { benchDatabase, cpuReader, measuredRun } from './server.js';
import { counts, env, int, onlyScenarios, runBench, flag } from './knobs.js';

const members = int('BENCH_MEMBERS', 833_334);
const historyDays = int('BENCH_HISTORY_DAYS', 30);
const duration = int('BENCH_DURATION', 10);
const warmup = int('BENCH_WARMUP', 2);
const timeoutS = int('BENCH_TIMEOUT', 60);
const minRequests = int('BENCH_MIN_REQUESTS', 10);
const connectionCounts = counts('BENCH_CONNECTIONS', '1,4');
const port = int('BENCH_PORT', 3904);
const only = onlyScenarios();
// Slow answers are to be measured at full size, not cut off at production's 5 s.
env.DATABASE_STATEMENT_TIMEOUT_MS ??= String(timeoutS * 1000);
const GOALS: Record<string, number> = { summary: 50, cohorts_12: 200 };
const HISTORY_SPAN = 90;
const DAY_MS = 86_400_000;

interface Fixture {
  members: number;
  subscriptions: number;
  /** The community the `community` scenario reads, with its subscription count. */
  largest_community: { id: string; subscriptions: number };
  money: MetricsSeed | null;
  seed_s: { members: number; payments: number | null };
  main: MembersFixture;
}

type Body = Record<string, any>;
interface Scenario {
  name: string;
  path: string;
  /** What a 200 must hold (an error message when it does not). */
  check(body: Body): string | undefined;
}

function scenarios(f: Fixture, now: Date): Scenario[] {
  const yesterday = utcDay(new Date(now.getTime() - DAY_MS));
  const from = utcDay(new Date(now.getTime() - HISTORY_SPAN * DAY_MS));
  const figures = (tiers: number) => (b: Body) => {
    const d = b.data as Body | undefined;
    if (!d || typeof d.active_subscribers !== 'number' || typeof d.mrr_cents !== 'number' || typeof d.churn_rate_30d !== 'number') return 'no figures';
    if (d.active_subscribers === 0 || d.mrr_cents === 0) return 'no paying members: the seed did not land';
    if (!Array.isArray(d.tier_mix) || d.tier_mix.length !== tiers) return `${d.tier_mix?.length} tiers in tier_mix, expected ${tiers}`;
    const mixed = (d.tier_mix as Body[]).reduce((n, t) => n + (t.members as number), 0);
    return mixed === d.active_subscribers ? undefined : `tier_mix members sum to ${mixed}, not active_subscribers ${d.active_subscribers}`;
  };
  return [
    { name: 'summary', path: '/api/v1/creator-metrics', check: figures(f.main.tier_ids.length) },
    {
      name: 'community',
      path: `/api/v1/creator-metrics/${f.largest_community.id}`,
      check: (b) => (b.data?.community_id !== f.largest_community.id ? 'not the community asked for' : typeof b.data?.engagement_30d?.posts !== 'number' ? 'no engagement_30d' : figures(b.data.tier_mix?.length ?? -1)(b)),
    },
    {
      name: 'cohorts_12',
      path: '/api/v1/creator-metrics/cohorts?period=month&periods=12',
      check: (b) => {
        const cohorts = b.data?.cohorts as Body[] | undefined;
        if (!Array.isArray(cohorts) || cohorts.length !== 12) return `${cohorts?.length} cohorts, expected 12`;
        if (!cohorts.some((c) => c.size > 0)) return 'every cohort empty';
        const bad = cohorts.findIndex((c, i) => (c.size > 0 ? c.retention_pct.length !== 12 - i || c.retention_pct[0] !== 100 : c.retention_pct.length !== 0));
        return bad < 0 ? undefined : `cohort ${bad}: ${JSON.stringify(cohorts[bad])}`;
      },
    },
    {
      name: 'history_90',
      path: `/api/v1/creator-metrics/history?from=${from}&to=${yesterday}`,
      check: (b) => {
        const days = b.data?.days as Body[] | undefined;
        // A capped backfill holds its days and the anchor before them (more on a kept database the job caught up).
        const least = historyDays > 0 ? Math.min(HISTORY_SPAN, historyDays + 1) : HISTORY_SPAN;
        if (!Array.isArray(days) || days.length < least || days.length > HISTORY_SPAN) return `${days?.length} days, expected ${least}..${HISTORY_SPAN} (was the history filled?)`;
        if (days.at(-1)!.day !== yesterday || (least === HISTORY_SPAN && days[0]!.day !== from)) return `days ${days[0]!.day}..${days.at(-1)!.day}, expected ${from}..${yesterday}`;
        return days.some((d) => d.active_subscribers > 0) ? undefined : 'no paying members on any day';
      },
    },
  ];
}

/**
 * Runs the history job once for the creator, timed. With `days` > 0 each scope without rows
 * first gets the day before the window, computed by the job's own query, so the job's catch-up
 * (after the last row) starts there, and the backfill covers the BENCH_HISTORY_DAYS asked for.
 * Each anchor is one pass of its own, so the anchors cost about what the run does.
 */
async function fillHistory(url: string, creatorId: string, days: number) {
  const { db, close } = connectPostgres({ url, poolMax: 1, statementTimeoutMs: 3_600_000 });
  try {
    const now = new Date();
    const history = createMetricsHistory({ db, now: () => now });
    const started = performance.now();
    let anchored = 0;
    if (days > 0) {
      const anchor = utcDay(new Date(now.getTime() - (days + 1) * DAY_MS));
      const communities = await db.selectFrom('communities').select('id').where('creator_id', '=', creatorId).execute();
      const scopes: Scope[] = [{ creatorId }, ...communities.map((c) => ({ creatorId, communityId: c.id }))];
      for (const scope of scopes) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from metrics_daily
          where creator_id = ${creatorId} and community_id is not distinct from ${scope.communityId ?? null}::uuid`.execute(db);
        if (rows[0]!.n > 0) continue;
        const [r] = await history.figuresAt(scope, [anchor], db);
        await sql`insert into metrics_daily (creator_id, community_id, day, mrr_cents, active_subscribers, trialing, new_subscribers, lost_subscribers, churn_rate_30d)
          values (${creatorId}, ${scope.communityId ?? null}::uuid, ${anchor}::date, ${r!.mrr_cents}::bigint, ${r!.active_subscribers}, ${r!.trialing},
                  ${r!.new_subscribers}, ${r!.lost_subscribers}, ${r!.churn_rate_30d}::numeric)`.execute(db);
        anchored++;
      }
    }
    const anchoredAt = performance.now();
    const { through, written } = await history.run({ creatorId });
    const ranAt = performance.now();
    // The job's steady state: the last day again, from the stored day before it and its changes (history-day.ts).
    await sql`delete from metrics_daily where creator_id = ${creatorId} and day = ${through}::date`.execute(db);
    const nextDayAt = performance.now();
    const again = await history.run({ creatorId });
    const s = (ms: number) => Math.round(ms / 100) / 10;
    return {
      capped_to_days: days > 0 ? days : null,
      anchor_rows: anchored,
      anchor_s: s(anchoredAt - started),
      run_s: s(ranAt - anchoredAt),
      rows_written: written,
      through,
      next_day: { rows: again.written, s: s(performance.now() - nextDayAt) },
    };
  } finally {
    await close();
  }
}

/**
 * The seeders write subscriptions around the mirror, so the metrics' counters are computed the
 * way reconciliation does (metrics/aggregates.ts rebuild), timed: on a fresh seed it writes them
 * all; on a kept database that is up to date it finds nothing to fix (and migrates one seeded
 * before the counters existed).
 */
async function rebuildCounters(url: string, creatorId: string) {
  const { db, close } = connectPostgres({ url, poolMax: 1, statementTimeoutMs: 3_600_000 });
  try {
    await migrateToLatest(db);
    const started = performance.now();
    const fixed = await db.transaction().execute((trx) => createMetricsAggregates().rebuild(creatorId, trx));
    await sql`vacuum analyze metrics_spells, metrics_members, metrics_days, metrics_cohorts, metrics_tiers, metrics_scopes`.execute(db);
    return { rows_fixed: fixed, s: Math.round((performance.now() - started) / 100) / 10 };
  } finally {
    await close();
  }
}

async function seed(url: string): Promise<Fixture> {
  const started = Date.now();
  const main = await seedMembers(url, { members });
  const seeded = Date.now();
  const money = env.BENCH_PAYMENTS === '0' ? null : await seedPayments(url, main.creator_id);
  const { db, close } = connectPostgres({ url, poolMax: 1, statementTimeoutMs: 600_000 });
  try {
    const { rows } = await sql<{ community_id: string; n: number }>`select community_id, count(*)::int as n from subscriptions
      where creator_id = ${main.creator_id} group by community_id order by n desc`.execute(db);
    return {
      members,
      subscriptions: rows.reduce((n, r) => n + r.n, 0),
      largest_community: { id: rows[0]!.community_id, subscriptions: rows[0]!.n },
      money,
      seed_s: { members: Math.round((seeded - started) / 1000), payments: money ? Math.round((Date.now() - seeded) / 1000) : null },
      main,
    };
  } finally {
    await close();
  }
}

async function main() {
  // BENCH_DB=<name of a database kept by BENCH_KEEP=1> reruns the load on it without seeding.
  const db = await benchDatabase('tribes_metrics_bench');
  const { name: dbName, fixtureFile } = db;
  // Watches the bench database's backends between runs (waitIdle).
  const statsDb = connectPostgres({ url: db.url, poolMax: 1, statementTimeoutMs: 10_000 });
  try {
    let fixture: Fixture;
    if (db.reused) {
      fixture = JSON.parse(await readFile(fixtureFile, 'utf8')) as Fixture;
    } else {
      fixture = await seed(db.url);
      console.error(`seeded ${fixture.members} members, ${fixture.subscriptions} subscriptions, ${fixture.money?.payments ?? 0} payments in ${JSON.stringify(fixture.seed_s)} s`);
      if (flag('BENCH_KEEP')) {
        await mkdir('.tmp', { recursive: true });
        await writeFile(fixtureFile, JSON.stringify(fixture));
        console.error(`kept database ${dbName}; rerun with BENCH_DB=${dbName} (fixture in ${fixtureFile})`);
      }
    }
    const counters = await rebuildCounters(db.url, fixture.main.creator_id);
    console.error(`counters: ${JSON.stringify(counters)}`);
    // On a kept database the job only catches up the days since its last run.
    const history = await fillHistory(db.url, fixture.main.creator_id, historyDays);
    console.error(`history: ${JSON.stringify(history)}`);

    const server = await db.startServer(port);
    const base = `http://127.0.0.1:${port}`;
    const cpu = cpuReader(server.pid!, dbName);
    const headers = { authorization: `Bearer ${fixture.main.api_key}` };

    const probe = async (s: Scenario) => {
      const started = performance.now();
      const res = await fetch(`${base}${s.path}`, { headers });
      const text = await res.text();
      const ms = Math.round((performance.now() - started) * 10) / 10;
      if (res.status !== 200) return { ok: false, status: res.status, ms, error: text.slice(0, 300) };
      const body = JSON.parse(text) as Body;
      const error = s.check(body);
      return { ok: error === undefined, status: 200, ms, ...(error ? { error } : {}), ...(Array.isArray(body.data?.days) ? { days: body.data.days.length } : {}) };
    };
    // An abandoned request (autocannon stops at its duration, the query goes on) must not weigh on the next run.
    const waitIdle = async () => {
      for (let i = 0; i < timeoutS * 10; i++) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = ${dbName} and backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid()`.execute(statsDb.db);
        if (rows[0]!.n === 0) return;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    /** A timed run, or `amount` requests when the route is too slow to answer enough times in one. */
    const load = async (s: Scenario, conns: number, run: { seconds: number } | { amount: number }) => {
      await waitIdle();
      // A slow route answers a handful of times in a run: its percentiles rest on `requests` samples.
      return measuredRun(cpu, { url: `${base}${s.path}`, connections: conns, timeout: timeoutS, headers, ...('amount' in run ? { amount: run.amount } : { duration: run.seconds }) }, 'total');
    };

    const failures: string[] = [];
    const results: Record<string, unknown> = {};
    const goals: Record<string, { p99_ms_at_most: number; by_connections: Record<string, { p99_ms: number; pass: boolean }>; met: boolean | null }> = {};
    for (const s of scenarios(fixture, new Date())) {
      if (only && !only.has(s.name)) continue;
      const p = await probe(s);
      if (!p.ok) {
        failures.push(`${s.name}: probe ${p.status}: ${p.error}`);
        results[s.name] = { path: s.path, probe: p };
        continue;
      }
      const byConnections: Record<string, Awaited<ReturnType<typeof load>>> = {};
      for (const conns of connectionCounts) {
        // From the probe, as if the clients shared nothing: a lower bound on what a run would get.
        const slow = (conns * duration * 1000) / p.ms < minRequests;
        if (warmup > 0) await load(s, conns, slow ? { amount: conns } : { seconds: warmup });
        const r = { ...(await load(s, conns, slow ? { amount: Math.max(minRequests, conns) } : { seconds: duration })), run: slow ? 'amount' : 'duration' };
        byConnections[conns] = r;
        if (r.non_2xx || r.errors || r.timeouts) failures.push(`${s.name} @${conns}: ${r.non_2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
        const goal = GOALS[s.name];
        if (goal !== undefined) {
          const g = (goals[s.name] ??= { p99_ms_at_most: goal, by_connections: {}, met: null });
          g.by_connections[conns] = { p99_ms: r.latency_ms.p99, pass: r.requests > 0 && r.latency_ms.p99 <= goal };
          g.met = Object.values(g.by_connections).every((x) => x.pass);
        }
        console.error(`${s.name} @${conns}: ${r.req_per_s} req/s, p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms, max ${r.latency_ms.max} ms (${r.requests} requests)`);
      }
      results[s.name] = { path: s.path, probe: p, connections: byConnections };
    }

    console.log(
      JSON.stringify(
        {
          database: dbName,
          kept: db.kept,
          members: fixture.members,
          subscriptions: fixture.subscriptions,
          largest_community: fixture.largest_community,
          payments: fixture.money?.payments ?? 0,
          refunds: fixture.money?.refunds ?? 0,
          seed_s: db.reused ? null : fixture.seed_s,
          counters_rebuild: counters,
          history_backfill: history,
          connections: connectionCounts,
          run: { duration_s: duration, warmup_s: warmup, min_requests: minRequests, request_timeout_s: timeoutS },
          server: { statement_timeout_ms: Number(env.DATABASE_STATEMENT_TIMEOUT_MS), database_pool_max: Number(env.DATABASE_POOL_MAX ?? 8) },
          scenarios: results,
          goals,
          failures,
        },
        null,
        2,
      ),
    );
    if (failures.length > 0) throw new Error(`${failures.length} failure(s):\n  ${failures.join('\n  ')}`);
  } finally {
    await statsDb.close();
    await db.close();
  }
}

runBench(main);
