/**
 * Load test of a challenge's leaderboard on PostgreSQL, at 100,000 participants.
 *
 *   npm run bench:leaderboard                                   # 110,000 members, 100,000 participants, 10 s per run
 *   BENCH_MEMBERS=12000 BENCH_PARTICIPANTS=10000 npm run bench:leaderboard   # smaller
 *   BENCH_KEEP=1 npm run bench:leaderboard, then BENCH_DB=<the name it prints> npm run bench:leaderboard   # rerun without seeding
 *   BENCH_SCENARIOS=top50,me BENCH_CONNECTIONS=1,4,16 npm run bench:leaderboard   # only these scenarios, these client counts
 *
 * Seeds a fresh database (BENCH_DATABASE_URL's server, database
 * `tribes_leaderboard_bench_<time>`, dropped afterwards unless kept) through
 * bench/seed-members.ts (BENCH_MEMBERS) and bench/seed-challenges.ts: one running
 * workouts_count challenge with BENCH_PARTICIPANTS participants, real scores, yesterday's
 * ranks and BENCH_TOKENS member tokens spread over the ranking. Starts the real server on it
 * as a child process, probes each route once (200 and the shape), then drives each scenario
 * with autocannon at every count of BENCH_CONNECTIONS, each after a warm-up (BENCH_WARMUP s):
 *
 *   top50         creator board, page 1 of 50 (GET /api/v1/challenges/:id/leaderboard?limit=50)
 *   me            member board, limit=1, a different participant per request: mostly the cost of
 *                 `me` (the member's rank by two range counts on the board index)
 *   member_page   member board, default limit 50: a page plus `me`, rotating participants
 *   deep_page     creator board, the page holding the middle of the board (page 1000 of 50 =
 *                 ranks 49,951–50,000 at 100,000 participants): an index walk past half of it
 *   my_challenges GET /api/v1/member/challenges, rotating participants (score and rank each)
 *
 * Goal (issue #13): p99 ≤ 20 ms for top50 and me, reported per connection count. Every
 * response must be 2xx: any other fails the run (after printing). One JSON document on stdout.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { seedChallenge, type ChallengeFixture } from './seed-challenges.js';
import { seedMembers, type MembersFixture } from './seed-members.js';
import { benchDatabase, cpuReader, measuredRun } from './server.js';
import { counts, env, int, onlyScenarios, runBench, flag } from './knobs.js';

const members = int('BENCH_MEMBERS', 110_000);
const participants = int('BENCH_PARTICIPANTS', 100_000);
const tokenCount = int('BENCH_TOKENS', 10_000);
const duration = int('BENCH_DURATION', 10);
const warmup = int('BENCH_WARMUP', 2);
const connectionCounts = counts('BENCH_CONNECTIONS', '1,4');
const port = int('BENCH_PORT', 3902);
const only = onlyScenarios();
const GOAL_P99_MS = 20;
const GOAL_SCENARIOS = ['top50', 'me'];

interface Fixture {
  members: number;
  participants: number;
  main: MembersFixture;
  challenge: ChallengeFixture;
}

interface Ranking {
  rank: number;
  member_id: string;
  name: string;
  score: number;
  delta: string;
}

interface Scenario {
  name: string;
  /** Path and query; member scenarios rotate the participants' tokens, creator ones send the API key. */
  path: string;
  member: boolean;
  /** What a 200 must hold (an error message when it does not). */
  check(body: Record<string, any>): string | undefined;
}

const PAGE = 50;

function scenarios(f: Fixture): Scenario[] {
  const board = `/api/v1/challenges/${f.challenge.challenge_id}/leaderboard`;
  const memberBoard = `/api/v1/member/challenges/${f.challenge.challenge_id}/leaderboard`;
  const deepPage = Math.max(1, Math.ceil(f.participants / 2 / PAGE));
  const ranks = (page: number, limit: number) => (b: Record<string, any>) => {
    const rows = b.data?.rankings as Ranking[] | undefined;
    if (!Array.isArray(rows)) return 'no data.rankings';
    const expected = Math.max(0, Math.min(limit, f.participants - (page - 1) * limit));
    if (rows.length !== expected) return `${rows.length} rankings, expected ${expected}`;
    if (rows.some((r, i) => r.rank !== (page - 1) * limit + i + 1 || !/^[+-]\d+$/.test(r.delta) || typeof r.score !== 'number')) return 'ranks not consecutive from the page start, or a bad delta/score';
    if (b.pagination?.total !== f.participants) return `pagination.total ${b.pagination?.total}, expected ${f.participants}`;
    return undefined;
  };
  const withMe = (page: number, limit: number) => (b: Record<string, any>) => {
    const me = b.data?.me as Ranking | null | undefined;
    if (!me || !(me.rank >= 1 && me.rank <= f.participants) || !/^[+-]\d+$/.test(me.delta)) return `bad me: ${JSON.stringify(me)}`;
    return ranks(page, limit)(b);
  };
  return [
    { name: 'top50', path: `${board}?page=1&limit=${PAGE}`, member: false, check: ranks(1, PAGE) },
    { name: 'me', path: `${memberBoard}?limit=1`, member: true, check: withMe(1, 1) },
    { name: 'member_page', path: memberBoard, member: true, check: withMe(1, PAGE) },
    { name: 'deep_page', path: `${board}?page=${deepPage}&limit=${PAGE}`, member: false, check: ranks(deepPage, PAGE) },
    {
      name: 'my_challenges',
      path: '/api/v1/member/challenges',
      member: true,
      check: (b) => {
        const mine = (b.data as Array<{ id: string; joined: boolean; rank: number | null }> | undefined)?.find((c) => c.id === f.challenge.challenge_id);
        return mine?.joined && typeof mine.rank === 'number' ? undefined : `the challenge is missing or not joined: ${JSON.stringify(mine)}`;
      },
    },
  ];
}

async function main() {
  // BENCH_DB=<name of a database kept by BENCH_KEEP=1> reruns the load on it without seeding.
  const db = await benchDatabase('tribes_leaderboard_bench');
  const { name: dbName, fixtureFile } = db;
  const url = db.url;
  try {
    let fixture: Fixture;
    let seedSeconds: { members: number; challenge: number } | null = null;
    if (db.reused) {
      fixture = JSON.parse(await readFile(fixtureFile, 'utf8')) as Fixture;
    } else {
      const started = Date.now();
      const main = await seedMembers(url, { members });
      const seeded = Date.now();
      const challenge = await seedChallenge(url, main, { participants, tokens: tokenCount });
      seedSeconds = { members: Math.round((seeded - started) / 1000), challenge: Math.round((Date.now() - seeded) / 1000) };
      fixture = { members, participants, main, challenge };
      console.error(`seeded ${members} members in ${seedSeconds.members} s, ${participants} participants in ${seedSeconds.challenge} s`);
      if (flag('BENCH_KEEP')) {
        await mkdir('.tmp', { recursive: true });
        await writeFile(fixtureFile, JSON.stringify(fixture));
        console.error(`kept database ${dbName}; rerun with BENCH_DB=${dbName} (fixture in ${fixtureFile})`);
      }
    }
    const tokens = fixture.challenge.member_tokens;
    if (tokens.length === 0) throw new Error('no member tokens (BENCH_TOKENS=0?): the member scenarios need some');

    const server = await db.startServer(port);
    const base = `http://127.0.0.1:${port}`;
    const cpu = cpuReader(server.pid!, dbName);
    // Each member request is a different participant (until the tokens wrap around).
    let turn = 0;
    const nextToken = () => tokens[turn++ % tokens.length]!;
    const authorization = (s: Scenario) => `Bearer ${s.member ? nextToken() : fixture.main.api_key}`;

    const probe = async (s: Scenario) => {
      const started = performance.now();
      const res = await fetch(`${base}${s.path}`, { headers: { authorization: authorization(s) } });
      const text = await res.text();
      const ms = Math.round((performance.now() - started) * 10) / 10;
      if (res.status !== 200) return { ok: false, status: res.status, ms, error: text.slice(0, 300) };
      const body = JSON.parse(text) as Record<string, any>;
      const error = s.check(body);
      const rows = (body.data?.rankings ?? []) as Ranking[];
      const sample = s.member && body.data?.me ? { me: body.data.me as Ranking } : rows.length ? { first: rows[0], moved: rows.filter((r) => r.delta !== '+0').length } : {};
      return { ok: error === undefined, status: 200, ms, ...(error ? { error } : {}), ...sample };
    };
    const load = (s: Scenario, conns: number, seconds: number) =>
      measuredRun(
        cpu,
        s.member
          ? { url: base, connections: conns, duration: seconds, requests: [{ method: 'GET', path: s.path, setupRequest: (req: Record<string, unknown>) => ({ ...req, headers: { authorization: authorization(s) } }) }] }
          : { url: `${base}${s.path}`, connections: conns, duration: seconds, headers: { authorization: authorization(s) } },
      );

    const failures: string[] = [];
    const results: Record<string, unknown> = {};
    const goals: Record<string, Record<string, { p99_ms: number; pass: boolean }>> = {};
    for (const s of scenarios(fixture)) {
      if (only && !only.has(s.name)) continue;
      const p = await probe(s);
      if (!p.ok) {
        failures.push(`${s.name}: probe ${p.status}: ${p.error}`);
        results[s.name] = { path: s.path, probe: p };
        continue;
      }
      const byConnections: Record<string, Awaited<ReturnType<typeof load>>> = {};
      for (const conns of connectionCounts) {
        if (warmup > 0) await load(s, conns, warmup);
        const r = await load(s, conns, duration);
        byConnections[conns] = r;
        if (r.non_2xx || r.errors || r.timeouts) failures.push(`${s.name} @${conns}: ${r.non_2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
        if (GOAL_SCENARIOS.includes(s.name)) (goals[s.name] ??= {})[conns] = { p99_ms: r.latency_ms.p99, pass: r.latency_ms.p99 <= GOAL_P99_MS };
        console.error(`${s.name} @${conns}: ${r.req_per_s} req/s, p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms, max ${r.latency_ms.max} ms`);
      }
      results[s.name] = { path: s.path, probe: p, connections: byConnections };
    }

    console.log(
      JSON.stringify(
        {
          database: dbName,
          kept: db.kept,
          members: fixture.members,
          participants: fixture.participants,
          member_tokens: tokens.length,
          seed_s: seedSeconds,
          connections: connectionCounts,
          duration_s: duration,
          warmup_s: warmup,
          database_pool_max: Number(env.DATABASE_POOL_MAX ?? 8),
          scenarios: results,
          goals: { p99_ms_at_most: GOAL_P99_MS, ...goals },
          failures,
        },
        null,
        2,
      ),
    );
    if (failures.length > 0) throw new Error(`${failures.length} failure(s):\n  ${failures.join('\n  ')}`);
  } finally {
    await db.close();
  }
}

runBench(main);
