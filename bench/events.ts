/**
 * Throughput of the outgoing-events dispatcher (src/modules/events/dispatcher.ts) on PostgreSQL.
 *
 *   npm run bench:events                     # 20,000 deliveries, 3 runs, median reported
 *   BENCH_EVENTS=5000 BENCH_RUNS=1 npm run bench:events
 *   EVENTS_CONCURRENCY=128 npm run bench:events   # passed on to the server
 *
 * A fresh database (BENCH_DATABASE_URL's server, dropped afterwards unless BENCH_KEEP=1), the
 * real server as a child process, a keep-alive receiver on 127.0.0.1 that answers 200 and
 * counts (every BENCH_VERIFY_EVERY-th delivery is verified with the `standardwebhooks`
 * package), and a creator whose endpoint on it is made through the API. Each run inserts
 * BENCH_EVENTS events with one pending delivery each straight in SQL, due now; the server's
 * poller (EVENTS_POLL_MS) sends them. Measured: deliveries/s from the first received to the
 * last, latency from the event's creation to its arrival, errors and duplicates.
 */
import http from 'node:http';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { connectPostgres } from '../src/db/client.js';
import { newId } from '../src/db/ids.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { generateApiKey } from '../src/http/auth.js';
import { env, int, runBench } from './knobs.js';
import { benchDatabase, cpuReader } from './server.js';

const events = int('BENCH_EVENTS', 20_000);
const runs = int('BENCH_RUNS', 3);
const verifyEvery = int('BENCH_VERIFY_EVERY', 100);
const timeoutS = int('BENCH_TIMEOUT_S', 600);
const port = int('BENCH_PORT', 3910);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);

/** The receiver: 200 to everything, kept alive; what arrived, when, and what failed to verify. */
async function startReceiver() {
  let webhook: Webhook | undefined;
  const state = {
    received: 0,
    seen: new Set<string>(),
    duplicates: 0,
    verified: 0,
    badSignatures: 0,
    latencies: [] as number[],
    first: 0,
    last: 0,
  };
  const server = http.createServer({ keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      const body = Buffer.concat(chunks).toString('utf8');
      const id = req.headers['webhook-id'] as string;
      if (state.seen.has(id)) state.duplicates++;
      else state.seen.add(id);
      if (state.received === 0) state.first = at;
      state.last = at;
      state.received++;
      const payload = JSON.parse(body) as { timestamp: string };
      state.latencies.push(at - Date.parse(payload.timestamp));
      if (webhook && state.received % verifyEvery === 0) {
        try {
          webhook.verify(body, { 'webhook-id': id, 'webhook-timestamp': req.headers['webhook-timestamp'] as string, 'webhook-signature': req.headers['webhook-signature'] as string });
          state.verified++;
        } catch {
          state.badSignatures++;
        }
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: receiverPort } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${receiverPort}/hooks`,
    state,
    useSecret: (secret: string) => (webhook = new Webhook(secret)),
    reset() {
      Object.assign(state, { received: 0, duplicates: 0, verified: 0, badSignatures: 0, latencies: [], first: 0, last: 0 });
      state.seen.clear();
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function main() {
  const bench = await benchDatabase('tribes_events');
  const receiver = await startReceiver();
  const { db, close } = connectPostgres({ url: bench.url, poolMax: 2, statementTimeoutMs: 600_000 });
  try {
    await migrateToLatest(db);
    const creatorId = newId();
    const apiKey = generateApiKey();
    await db.insertInto('creators').values({ id: creatorId, name: 'Events Bench Creator', email: `events-bench-${Date.now()}@example.com`, processor_account_id: null }).execute();
    await db.insertInto('api_keys').values({ id: newId(), creator_id: creatorId, key_hash: apiKey.hash, prefix: apiKey.prefix }).execute();

    const server = await bench.startServer(port);
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['workout.logged', 'pr.achieved'], description: 'bench receiver' }),
    });
    if (res.status !== 201) throw new Error(`creating the endpoint: ${res.status} ${await res.text()}`);
    const endpoint = ((await res.json()) as { data: { id: string; secret: string } }).data;
    receiver.useSecret(endpoint.secret);

    const cpu = cpuReader(server.pid!, bench.name);
    const results = [];
    for (let run = 0; run < runs; run++) {
      receiver.reset();
      // N events and their pending deliveries, due now, as the outbox writes them (one statement).
      await sql`with new_events as (
          insert into events (id, creator_id, type, data)
          select tribes_uuid_v7(), ${creatorId}::uuid, 'workout.logged',
                 jsonb_build_object('log_id', gen_random_uuid(), 'member_id', gen_random_uuid(), 'community_id', gen_random_uuid(),
                                    'workout_id', gen_random_uuid(), 'performed_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                    'sets_count', 8, 'prs_count', 0)
          from generate_series(1, ${events})
          returning id
        )
        insert into webhook_deliveries (id, creator_id, endpoint_id, event_id, event_type, next_attempt_at)
        select tribes_uuid_v7(), ${creatorId}::uuid, ${endpoint.id}::uuid, e.id, 'workout.logged', now() from new_events e`.execute(db);
      const cpuBefore = cpu();
      const started = Date.now();
      while (receiver.state.received < events && Date.now() - started < timeoutS * 1000) await new Promise((r) => setTimeout(r, 100));
      // Wait for the last batch to settle (the receiver has it before the database does).
      let pending = events;
      const settleStarted = Date.now();
      while (Date.now() - settleStarted < 10_000) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where status = 'pending'`.execute(db);
        pending = rows[0]!.n;
        if (pending === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const cpuAfter = cpu();
      const { rows: statuses } = await sql<{ status: string; n: number }>`select status, count(*)::int as n from webhook_deliveries group by status`.execute(db);
      const { rows: failed } = await sql<{ n: number }>`select count(*)::int as n from webhook_attempts where status_code is null or status_code >= 300`.execute(db);
      const s = receiver.state;
      const sorted = [...s.latencies].sort((a, b) => a - b);
      const seconds = (s.last - s.first) / 1000;
      const perDelivery = (k: 'server' | 'postgres') =>
        cpuBefore[k] === undefined || cpuAfter[k] === undefined || s.received === 0 ? null : Math.round(((cpuAfter[k]! - cpuBefore[k]!) / s.received) * 1000) / 1000;
      const result = {
        run: run + 1,
        received: s.received,
        unique: s.seen.size,
        duplicates: s.duplicates,
        seconds_first_to_last: seconds,
        deliveries_per_s: seconds > 0 ? Math.round(((s.received - 1) / seconds) * 10) / 10 : null,
        latency_ms: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? null },
        signatures: { verified: s.verified, bad: s.badSignatures },
        failed_attempts: failed[0]!.n,
        still_pending: pending,
        statuses: Object.fromEntries(statuses.map((r) => [r.status, r.n])),
        cpu_ms_per_delivery: { server: perDelivery('server'), postgres: perDelivery('postgres') },
      };
      console.error(JSON.stringify(result));
      results.push(result);
    }
    const errors = results.reduce((n, r) => n + r.failed_attempts + r.signatures.bad + r.still_pending + (events - r.unique), 0);
    console.log(
      JSON.stringify(
        {
          events_per_run: events,
          runs,
          events_poll_ms: Number(env.EVENTS_POLL_MS ?? 500),
          events_concurrency: Number(env.EVENTS_CONCURRENCY ?? 64),
          deliveries_per_s: { median: median(results.map((r) => r.deliveries_per_s ?? 0)), runs: results.map((r) => r.deliveries_per_s) },
          latency_ms: { p50_median: median(results.map((r) => r.latency_ms.p50 ?? 0)), p99_median: median(results.map((r) => r.latency_ms.p99 ?? 0)) },
          cpu_ms_per_delivery: {
            server: median(results.map((r) => r.cpu_ms_per_delivery.server ?? 0)),
            postgres: median(results.map((r) => r.cpu_ms_per_delivery.postgres ?? 0)),
          },
          duplicates: results.reduce((n, r) => n + r.duplicates, 0),
          signatures_verified: results.reduce((n, r) => n + r.signatures.verified, 0),
          errors,
        },
        null,
        2,
      ),
    );
    if (errors > 0) throw new Error(`${errors} deliveries failed, went missing or did not verify`);
  } finally {
    await close();
    await receiver.close();
    await bench.close();
  }
}

runBench(main);
