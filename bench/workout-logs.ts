/**
 * Load test of POST /api/v1/member/workout-logs on PostgreSQL, against a seeded history.
 *
 *   npm run bench                      # 2,000 members × 100 logs × 10 sets = 2M sets, 20 s of load
 *   BENCH_LOGS_PER_MEMBER=500 npm run bench   # 10M sets
 *   BENCH_IDEMPOTENCY=1 npm run bench        # each log with its own Idempotency-Key, as the app sends it
 *   BENCH_KEEP=1 npm run bench, then BENCH_DB=<the name it prints> npm run bench   # rerun without seeding
 *   BENCH_CONNECTIONS=16 npm run bench     # fewer clients in flight: smaller group-commit batches
 *   BENCH_CHALLENGES=0 npm run bench       # members in no challenge (default 3 running ones each)
 *   BENCH_WEBHOOK=1 npm run bench          # the creator has an endpoint for workout.logged and pr.achieved
 *                                          # (a local receiver): the outbox writes on the hot path
 *
 * Seeds a fresh database (BENCH_DATABASE_URL's server, database `tribes_bench_<time>`,
 * dropped afterwards) through SQL, starts the real server on it as a child process, then
 * drives the log endpoint with autocannon: every request is a different member's workout
 * (8 sets over 4 exercises, one warm-up), so each one reads and updates PR state.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { newId } from '../src/db/ids.js';
import { generateApiKey } from '../src/http/auth.js';
import { cpuReader, startBenchServer } from './server.js';
import { seedTrainingHistory, type BenchFixture } from './seed-training.js';
import { env, int, runBench, flag } from './knobs.js';

const serverUrl = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const members = int('BENCH_MEMBERS', 2000);
const logsPerMember = int('BENCH_LOGS_PER_MEMBER', 100);
const setsPerLog = int('BENCH_SETS_PER_LOG', 10);
// Running challenges every member takes part in (workouts_count, volume_kg, streak_days, ...).
const challenges = int('BENCH_CHALLENGES', 3);
const duration = int('BENCH_DURATION', 20);
const connections = int('BENCH_CONNECTIONS', 32);
const port = int('BENCH_PORT', 3900);

async function main() {
  // BENCH_DB=<name of a database kept by BENCH_KEEP=1> reruns the load on it without seeding.
  const reuse = env.BENCH_DB;
  const dbName = reuse ?? `tribes_bench_${Date.now()}`;
  const fixtureFile = `.tmp/${dbName}.json`;
  const admin = connectPostgres({ url: serverUrl, poolMax: 1, statementTimeoutMs: 60_000 });
  if (!reuse) await sql.raw(`create database ${dbName}`).execute(admin.db);
  const url = new URL(serverUrl);
  url.pathname = `/${dbName}`;
  let server: ChildProcess | undefined;
  try {
    let fixture: BenchFixture;
    if (reuse) {
      fixture = JSON.parse(await readFile(fixtureFile, 'utf8')) as BenchFixture;
      // What autovacuum would have done since the last run. This machine's PostgreSQL runs
      // without it (`autovacuum` in the output): each update leaves a dead version of its row
      // (challenge scores, activity, records), tens of thousands a run in an 8k-row table, all
      // still there when a kept database is measured again.
      await vacuumWritten(url.toString());
    } else {
      const started = Date.now();
      fixture = await seedTrainingHistory(url.toString(), { members, logsPerMember, setsPerLog, challenges });
      console.log(`seeded ${members * logsPerMember * setsPerLog} sets (${members} members) in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      if (flag('BENCH_KEEP')) {
        await mkdir('.tmp', { recursive: true });
        await writeFile(fixtureFile, JSON.stringify(fixture));
        console.log(`kept database ${dbName}; rerun with BENCH_DB=${dbName}`);
      }
    }

    server = await startBenchServer(url.toString(), port);

    const { exerciseIds, tokens, workoutId } = fixture;
    const webhook = flag('BENCH_WEBHOOK') ? await subscribeCreator(url.toString(), workoutId) : undefined;
    let n = 0;
    // The floor this machine sets: an authenticated read (one indexed query) on the same server.
    const floor = await autocannon({
      url: `http://127.0.0.1:${port}/api/v1/member/me`,
      connections,
      duration: Math.min(duration, 10),
      setupClient: (client: { setHeaders(h: Record<string, string>): void }) => client.setHeaders({ authorization: `Bearer ${tokens[n++ % tokens.length]}` }),
    });
    // Where the CPU of a log goes: the server process, this database's PostgreSQL backends,
    // and this process (autocannon).
    const backends = cpuReader(server.pid!, dbName);
    const cpu = () => ({ ...backends(), loadGenerator: (process.cpuUsage().user + process.cpuUsage().system) / 1000 });
    const cpuBefore = cpu();
    const result = await autocannon({
      url: `http://127.0.0.1:${port}`,
      connections,
      duration,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/member/workout-logs',
          setupRequest: (req: Record<string, unknown>) => {
            const token = tokens[n++ % tokens.length];
            const sets = Array.from({ length: 8 }, (_, i) => ({
              exercise_id: exerciseIds[i % 4],
              reps: 1 + Math.floor(Math.random() * 12),
              load_kg: 2.5 * (4 + Math.floor(Math.random() * 64)),
              ...(i === 0 ? { is_warmup: true } : {}),
            }));
            return {
              ...req,
              headers: {
                'content-type': 'application/json',
                authorization: `Bearer ${token}`,
                // As the member app sends it: a fresh key per workout (claim + stored answer).
                ...(flag('BENCH_IDEMPOTENCY') ? { 'idempotency-key': randomUUID() } : {}),
              },
              body: JSON.stringify({ workout_id: workoutId, performed_at: new Date().toISOString(), sets }),
            };
          },
        },
      ],
    });
    const cpuAfter = cpu();
    const outbox = webhook ? await webhook.finish() : undefined;
    const perLog = (k: keyof typeof cpuBefore) =>
      cpuBefore[k] === undefined || cpuAfter[k] === undefined ? null : Math.round(((cpuAfter[k]! - cpuBefore[k]!) / result.requests.total) * 1000) / 1000;
    console.log(
      JSON.stringify(
        {
          history_sets: members * logsPerMember * setsPerLog,
          autovacuum: (await sql<{ autovacuum: string }>`show autovacuum`.execute(admin.db)).rows[0]?.autovacuum,
          challenges_per_member: reuse ? 'as seeded' : challenges,
          connections,
          duration_s: duration,
          logs_per_s: { median: result.requests.p50, mean: result.requests.average, min: result.requests.min },
          latency_ms: { median: result.latency.p50, p97_5: result.latency.p97_5, p99: result.latency.p99 },
          total: result.requests.total,
          cpu_ms_per_log: { server: perLog('server'), postgres: perLog('postgres'), load_generator: perLog('loadGenerator') },
          ...(outbox ? { webhook: outbox } : {}),
          baseline_get_member_me: { median_per_s: floor.requests.p50, latency_median_ms: floor.latency.p50 },
          non_2xx: result.non2xx,
          errors: result.errors,
        },
        null,
        2,
      ),
    );
  } finally {
    // A server that already died (bad config) has nothing to wait for.
    if (server?.pid && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    if (!flag('BENCH_KEEP') && !reuse) await sql.raw(`drop database ${dbName}`).execute(admin.db);
    await admin.close();
  }
}

/** Vacuums (and analyzes) the tables a logging run updates in place. */
async function vacuumWritten(databaseUrl: string) {
  const { db, close } = connectPostgres({ url: databaseUrl, poolMax: 1, statementTimeoutMs: 600_000 });
  try {
    await sql`vacuum (analyze) challenge_participants, challenge_score_bands, member_activity, member_training, personal_records`.execute(db);
  } finally {
    await close();
  }
}

/**
 * BENCH_WEBHOOK=1: the creator whose program the logs follow (so whose community they go to)
 * gets an endpoint for workout.logged and pr.achieved, made through the API with an API key
 * written here, pointing at a receiver in this process that answers 200. `finish` answers what
 * the load wrote to the outbox and what the server's dispatcher delivered meanwhile.
 */
async function subscribeCreator(databaseUrl: string, workoutId: string) {
  const { db, close } = connectPostgres({ url: databaseUrl, poolMax: 1, statementTimeoutMs: 60_000 });
  let received = 0;
  const receiver = http.createServer({ keepAlive: true }, (req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  const { creator_id: creatorId } = await db.selectFrom('workouts').select('creator_id').where('id', '=', workoutId).executeTakeFirstOrThrow();
  // A kept database (BENCH_DB) may hold an earlier run's endpoint, pointing at a receiver gone.
  await db.deleteFrom('webhook_endpoints').where('creator_id', '=', creatorId).execute();
  const apiKey = generateApiKey();
  await db.insertInto('api_keys').values({ id: newId(), creator_id: creatorId, key_hash: apiKey.hash, prefix: apiKey.prefix }).execute();
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiverUrl, events: ['workout.logged', 'pr.achieved'] }),
  });
  if (res.status !== 201) throw new Error(`creating the endpoint: ${res.status} ${await res.text()}`);
  const counts = async () => {
    const { rows } = await sql<{ type: string; n: number }>`select type, count(*)::int as n from events where creator_id = ${creatorId} group by type`.execute(db);
    return Object.fromEntries(rows.map((r) => [r.type, r.n])) as Record<string, number>;
  };
  const before = await counts();
  const receivedBefore = received;
  return {
    async finish() {
      const after = await counts();
      const pending = async () =>
        (await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where creator_id = ${creatorId} and status = 'pending'`.execute(db)).rows[0]!.n;
      const delivered = received - receivedBefore;
      const pendingAfterLoad = await pending();
      // The node gives way during the load (EVENTS_BUSY_*) and catches up after: how long that takes.
      const quietFrom = Date.now();
      while ((await pending()) > 0 && Date.now() - quietFrom < 300_000) await new Promise((r) => setTimeout(r, 250));
      const caughtUpS = Math.round((Date.now() - quietFrom) / 100) / 10;
      await close();
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
      const written = (type: string) => (after[type] ?? 0) - (before[type] ?? 0);
      return {
        events_written: { 'workout.logged': written('workout.logged'), 'pr.achieved': written('pr.achieved') },
        delivered_during_load: delivered,
        pending_after_load: pendingAfterLoad,
        all_delivered_s_after_load: caughtUpS,
        delivered_in_all: received - receivedBefore,
      };
    },
  };
}

runBench(main);
