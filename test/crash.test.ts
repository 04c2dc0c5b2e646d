import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFailed } from 'vitest';
import { describeOp, historyOf, runLoad, settle, settled, Workload, type Op } from './crash/load.js';
import { createFreshDatabase, freePorts, ServerProcess, sleep, type FreshDatabase } from './crash/server.js';
import { call, chargeOfEach } from './crash/http.js';
import { answerViolations, effectViolations, finalityViolations, readEffects, replayViolations, report } from './crash/verify.js';
import { startReceiver, verified } from './events-kit.js';

/**
 * The crash suite (PostgreSQL only). The real server runs as a child process on a database of
 * its own; 16 clients send keyed POSTs (workout logs, communities, partial refunds, manual
 * payouts), the server is SIGKILLed mid-load three times and restarted, then PostgreSQL drops
 * every connection of that database for 3 s mid-load. Every request that got no answer (or
 * 409 idempotency_key_in_use, 502, 503) is retried with its key and body until it gets a final
 * answer. Then: every key answered 2xx had its effect exactly once (database rows, processor
 * objects), answers replay as they were first given, no 500, the ledger adds up and no
 * claim is left in progress. And outgoing events (issue #30): a receiver subscribed to
 * `workout.logged` gets every committed log of the community at least once, and nothing for a
 * log that does not exist. Only outcomes are asserted, never timings.
 */

const postgresUrl = inject('postgresUrl');
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const CLIENTS = 16;
const MEMBERS = 12;
const PRICE_CENTS = 100_000;
/** How long a key may stay unanswered or in progress once the server is back (a stuck claim fails). */
const SETTLE_DEADLINE_MS = 20_000;
const CRASH_ROUNDS = 3;
const OUTAGE_MS = 3000;
const BENCH_PRESS_ID = '33b0a54f-7196-43fb-90b5-067f42ea28b6';
const BACK_SQUAT_ID = '8d6e0d29-b751-4980-8f65-2f3e409be336';

const randomInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

describe.runIf(postgresUrl)('crash suite: keyed requests survive SIGKILL and a database outage', () => {
  const runId = crypto.randomBytes(4).toString('hex');
  const adminToken = `crash_admin_${crypto.randomBytes(18).toString('hex')}`;
  let database: FreshDatabase | undefined;
  let server: ServerProcess | undefined;
  let dataDir: string | undefined;
  let stripe: Stripe;
  let creator: { id: string; authorization: string; account: string };
  let communityId: string;
  let members: Array<{ id: string; authorization: string }> = [];
  let subscriptions: Array<{ id: string; processorId: string; charge: string }> = [];
  const ops: Op[] = [];
  let loadDone = false;
  let failed = false;
  let printedOutput = false;
  const killOnExit = () => server?.killSync();

  /** On the first failure: the server's unexpected errors, the tail of its output, and where all of it is. */
  const printServerOutput = () => {
    failed = true;
    if (printedOutput || !server) return;
    printedOutput = true;
    const errors = server.unexpectedErrors();
    console.error(
      `[crash suite] server errors other than "database unavailable" (${errors.length}):\n${errors.join('\n')}\n` +
        `[crash suite] server output (tail):\n${server.tail(8000)}\n[crash suite] the server's whole output is in ${server.logFile}`,
    );
  };

  const api = (method: 'GET' | 'POST', url: string, opts: { auth?: string; body?: unknown } = {}) => call(server!.url, method, url, opts);

  /** A set-up POST that must answer 201; its `data`. */
  async function expectCreated(url: string, opts: { auth?: string; body?: unknown }) {
    const res = await api('POST', url, opts);
    if (res.status !== 201) throw new Error(`set-up POST ${url}: expected 201, got ${res.status} ${res.text}`);
    return res.json.data;
  }

  async function simHelper(helper: string, body: object) {
    const res = await fetch(`http://127.0.0.1:${simPort}/v1/test_helpers/${helper}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk_test_crash_suite' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`simulator ${helper}: ${res.status} ${text}`);
  }

  /** Polls `check` until it returns true (set-up only; the suite never asserts on timing). */
  async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`set-up: timed out waiting for ${what}`);
      await sleep(100);
    }
  }

  let simPort: number;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let endpointSecret = '';

  beforeAll(async () => {
    process.once('exit', killOnExit);
    try {
      database = await createFreshDatabase(postgresUrl!, `crash_${runId}`);
      const [port, sim] = await freePorts(2);
      simPort = sim!;
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-crash-'));
      const serverEnv = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? os.tmpdir(),
        ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: database.url,
        PROCESSOR: 'simulator',
        PROCESSOR_SIM_HOST: '127.0.0.1',
        PROCESSOR_SIM_PORT: String(simPort),
        STRIPE_SECRET_KEY: 'sk_test_crash_suite',
        STRIPE_WEBHOOK_SECRET: `whsec_${crypto.randomBytes(16).toString('hex')}`,
        DATA_DIR: dataDir,
        ADMIN_TOKEN: adminToken,
        RATE_LIMIT_MAX: '1000000',
        LOG_LEVEL: 'warn',
        RECONCILE_INTERVAL_MS: '0',
        METRICS_HISTORY_INTERVAL_MS: '0',
        SHUTDOWN_TIMEOUT_MS: '2000',
      };
      server = new ServerProcess({ cwd: repoRoot, env: serverEnv, port: port!, logFile: path.join(os.tmpdir(), `tribes-crash-${runId}.log`) });
      server.start();
      await server.waitReady();
      stripe = new Stripe('sk_test_crash_suite', { host: '127.0.0.1', port: simPort, protocol: 'http', maxNetworkRetries: 2 });

      // A creator (admin API), a community and a yearly tier (creator API).
      const admin = `Bearer ${adminToken}`;
      const made = await expectCreated('/api/v1/admin/creators', { auth: admin, body: { name: 'Crash Creator', email: `crash-${runId}@example.com` } });
      creator = { id: made.creator.id, authorization: `Bearer ${made.api_key}`, account: made.creator.processor_account_id };
      // A new account takes no charges until its creator onboards (pressing Continue at the processor).
      await simHelper(`accounts/${creator.account}/onboard`, {});
      const community = await expectCreated('/api/v1/communities', {
        auth: creator.authorization,
        body: { name: 'Crash Gym', slug: `crash-${runId}-home`, category: 'musculacao' },
      });
      communityId = community.id;
      // Outgoing events: a receiver in this process, subscribed to the logs (loopback is allowed with the simulator).
      receiver = await startReceiver();
      endpointSecret = (await expectCreated('/api/v1/webhook-endpoints', { auth: creator.authorization, body: { url: receiver.url, events: ['workout.logged'] } })).secret;
      const tier = await expectCreated('/api/v1/tiers', {
        auth: creator.authorization,
        body: { community_id: communityId, name: 'Yearly', price_cents: PRICE_CENTS, billing_period: 'yearly' },
      });

      // Members sign up and pay through hosted checkout (the simulator's test helper presses Pay).
      members = await Promise.all(
        Array.from({ length: MEMBERS }, async (_, i) => {
          const signed = await expectCreated('/api/v1/member/signup', {
            body: { name: `Crash Member ${i}`, email: `crash-${runId}-m${i}@example.com`, password: `pw-${runId}-long-enough-${i}` },
          });
          return { id: signed.member.id as string, authorization: `Bearer ${signed.token}` };
        }),
      );
      for (const m of members) {
        const session = await expectCreated('/api/v1/member/checkout-sessions', { auth: m.authorization, body: { tier_id: tier.id } });
        await simHelper(`checkout_sessions/${session.processor_session_id}/complete`, { payment_method: 'pm_card_visa' });
      }
      let subs: any[] = [];
      await until(`${MEMBERS} active subscriptions`, async () => {
        const res = await api('GET', `/api/v1/subscriptions?limit=100&tier_id=${tier.id}`, { auth: creator.authorization });
        subs = (res.json?.data ?? []).filter((s: any) => s.status === 'active');
        return subs.length === MEMBERS;
      });

      // A manual payout schedule (set at the processor, learned from account.updated), then
      // 8 days on the simulator clock so the charges' funds are available.
      await stripe.accounts.update(creator.account, { settings: { payouts: { schedule: { interval: 'manual' } } } });
      await until('the manual payout schedule', async () => {
        const res = await api('GET', '/api/v1/payouts/balance', { auth: creator.authorization });
        return res.json?.data?.payout_schedule === 'manual';
      });
      await simHelper('clock/advance', { seconds: 8 * 86_400 });
      const net = MEMBERS * (PRICE_CENTS - PRICE_CENTS / 10);
      await until('the available balance', async () => {
        const res = await api('GET', '/api/v1/payouts/balance', { auth: creator.authorization });
        return res.json?.data?.available_cents === net;
      });

      // Each subscription's payment (the charge a refund of it must land on).
      subscriptions = await chargeOfEach(stripe, creator.account, subs);
    } catch (err) {
      printServerOutput();
      throw err;
    }
  }, 120_000);

  afterAll(async () => {
    process.removeListener('exit', killOnExit);
    try {
      await server?.kill();
      await server?.closeLog();
      await receiver?.close();
      if (server && !failed) fs.rmSync(server.logFile, { force: true });
    } finally {
      try {
        await database?.drop();
      } finally {
        if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }, 60_000);

  const summarize = (label: string, roundOps: readonly Op[], extra: string) => {
    const by = (route: string) => roundOps.filter((op) => op.route === route).length;
    const noAnswer = roundOps.filter((op) => op.attempts[0]?.status === 0).length;
    const unavailable = roundOps.filter((op) => op.attempts[0]?.status === 503).length;
    const badGateway = roundOps.filter((op) => op.attempts.some((a) => a.status === 502)).length;
    const stuck = roundOps.filter((op) => op.stuckIn.length > 0).length;
    const line =
      `${label}: ${roundOps.length} requests (log ${by('workout_log')}, community ${by('community')}, refund ${by('refund')}, payout ${by('payout')}); ` +
      `first attempt: ${noAnswer} no answer, ${unavailable} × 503; ${badGateway} saw a 502; ${extra}; ${stuck} stuck`;
    console.log(`[crash suite] ${line}`);
  };

  /** Sends again a sample of keys that got a final answer (all of them but the workout logs, 150 of those). */
  const resendSample = (roundOps: readonly Op[], all: boolean) => {
    const answered = roundOps.filter(settled);
    if (all) return answered.slice(0, 1500);
    const logs = answered.filter((op) => op.route === 'workout_log').sort(() => Math.random() - 0.5);
    return [...answered.filter((op) => op.route !== 'workout_log'), ...logs.slice(0, 150)];
  };

  let workload: Workload;
  let diedDuringOutage = false;

  async function crashRound(round: number) {
    const label = `crash ${round}`;
    const roundOps: Op[] = [];
    let stop = false;
    const loading = runLoad({ baseUrl: server!.url, workload, round, roundLabel: label, concurrency: CLIENTS, stop: () => stop, ops: roundOps });
    const delay = randomInt(150, 1500);
    await sleep(delay);
    await server!.kill();
    stop = true;
    await loading;
    ops.push(...roundOps);
    server!.start();
    await server!.waitReady();
    const recovery = await settle(server!.url, roundOps, 'recovery', { deadlineMs: SETTLE_DEADLINE_MS, concurrency: CLIENTS });
    const sample = resendSample(roundOps, false);
    await settle(server!.url, sample, 'resend', { deadlineMs: SETTLE_DEADLINE_MS, concurrency: CLIENTS, alwaysOnce: true });
    summarize(label, roundOps, `SIGKILL after ${delay} ms; recovery ${recovery.passes} pass(es); ${sample.length} answered keys re-sent`);
  }

  async function outageRound(round: number) {
    const label = 'database outage';
    const roundOps: Op[] = [];
    let stop = false;
    const loading = runLoad({ baseUrl: server!.url, workload, round, roundLabel: label, concurrency: CLIENTS, stop: () => stop, ops: roundOps });
    const delay = randomInt(200, 700);
    await sleep(delay);
    const terminator = new pg.Client({ connectionString: database!.adminUrl });
    await terminator.connect();
    let terminated = 0;
    try {
      const until = Date.now() + OUTAGE_MS;
      while (Date.now() < until) {
        const res = await terminator.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database!.name]);
        terminated += res.rowCount ?? 0;
        await sleep(50);
      }
    } finally {
      await terminator.end();
    }
    await sleep(500);
    stop = true;
    await loading;
    ops.push(...roundOps);
    if (!server!.alive) {
      // Asserted below; restarted so that the keys can still be settled and checked.
      diedDuringOutage = true;
      console.log('[crash suite] the server process exited during the database outage (restarted)');
      server!.start();
    }
    await server!.waitReady();
    const recovery = await settle(server!.url, roundOps, 'recovery', { deadlineMs: SETTLE_DEADLINE_MS, concurrency: CLIENTS });
    const sample = resendSample(roundOps, true);
    await settle(server!.url, sample, 'resend', { deadlineMs: SETTLE_DEADLINE_MS, concurrency: CLIENTS, alwaysOnce: true });
    summarize(label, roundOps, `outage after ${delay} ms, ${terminated} sessions terminated; recovery ${recovery.passes} pass(es); ${sample.length} answered keys re-sent`);
  }

  it(
    'runs the keyed load through 3 SIGKILLs of the server and a 3 s database outage, retrying every unanswered key',
    async () => {
      onTestFailed(printServerOutput);
      workload = new Workload({
        runId,
        creatorAuthorization: creator.authorization,
        members,
        communityId,
        subscriptions,
        exerciseIds: [BENCH_PRESS_ID, BACK_SQUAT_ID],
        performedAtBaseMs: Math.floor(Date.now() / 1000) * 1000 - 6 * 3600_000,
      });
      for (let round = 1; round <= CRASH_ROUNDS; round++) await crashRound(round);
      await outageRound(CRASH_ROUNDS + 1);
      // Keys that were stuck get one more chance, so their fate (executed once or twice) is known.
      const stuck = ops.filter((op) => !settled(op));
      if (stuck.length > 0) {
        await settle(server!.url, stuck, 'sweep', { deadlineMs: 15_000, concurrency: CLIENTS });
        const line = `${stuck.length} keys were stuck; after a final sweep ${stuck.filter((op) => !settled(op)).length} still are`;
        console.log(`[crash suite] ${line}`);
      }
      loadDone = true;
      expect(diedDuringOutage, 'the server process exited while the database was unreachable (see its output)').toBe(false);
      expect(server!.alive, 'the server should still be running').toBe(true);
      expect(ops.length).toBeGreaterThan(0);
    },
    300_000,
  );

  const requireLoad = () => {
    onTestFailed(printServerOutput);
    if (!loadDone) throw new Error('the load did not complete (see the first failure); nothing to check');
  };

  it('never answers 500, and every 503 carries Retry-After', () => {
    requireLoad();
    const violations = answerViolations(ops);
    expect(violations.length, report('5xx answers', violations)).toBe(0);
  }, 10_000);

  it(`gives every key a final 2xx answer; none stays unanswered or in progress over ${SETTLE_DEADLINE_MS / 1000} s`, () => {
    requireLoad();
    const violations = finalityViolations(ops, SETTLE_DEADLINE_MS / 1000);
    expect(violations.length, report('keys without a final 2xx answer', violations)).toBe(0);
  }, 10_000);

  it('replays an answered key with Idempotent-Replayed: true and the same status and body', () => {
    requireLoad();
    const violations = replayViolations(ops);
    expect(violations.length, report('answers that were not replays', violations)).toBe(0);
  }, 10_000);

  it("executes every answered key's effect exactly once (workout logs, communities, processor refunds and payouts)", async () => {
    requireLoad();
    const db = new pg.Client({ connectionString: database!.url });
    await db.connect();
    try {
      const effects = await readEffects({
        db,
        stripe,
        account: creator.account,
        creatorId: creator.id,
        memberIds: members.map((m) => m.id),
        excludeCommunityIds: [communityId],
      });
      const violations = effectViolations(
        ops,
        effects,
        subscriptions.map((s) => s.charge),
      );
      expect(violations.length, report('effects not executed exactly once', violations)).toBe(0);
    } finally {
      await db.end();
    }
  }, 60_000);

  it('leaves a ledger without mismatch', async () => {
    requireLoad();
    const res = await api('GET', `/api/v1/admin/creators/${creator.id}/ledger`, { auth: `Bearer ${adminToken}` });
    expect(res.status, res.text).toBe(200);
    const failed = (res.json.data.checks as Array<{ name: string; ok: boolean; detail: string }>).filter((c) => !c.ok);
    expect(res.json.data.ok, report('ledger checks failed', failed.map((c) => `${c.name}: ${c.detail}`))).toBe(true);
  }, 60_000);

  it('leaves no idempotency claim in progress', async () => {
    requireLoad();
    const db = new pg.Client({ connectionString: database!.url });
    await db.connect();
    try {
      const { rows } = await db.query<{ scope: string; key: string; locked_at: Date }>(
        "select scope, key, locked_at from idempotency_keys where state = 'in_progress' order by key",
      );
      const byKey = new Map(ops.map((op) => [op.key, op]));
      const lines = rows.map((r) => {
        const op = byKey.get(r.key);
        return op ? `${describeOp(op)}: claim in progress since ${r.locked_at.toISOString()}; ${historyOf(op)}` : `${r.scope} ${r.key}: claim in progress`;
      });
      expect(rows.length, report("select count(*) from idempotency_keys where state = 'in_progress'", lines)).toBe(0);
    } finally {
      await db.end();
    }
  }, 30_000);

  it('delivers workout.logged at least once for every committed log of the community, signed, and none for a log that does not exist', async () => {
    requireLoad();
    const db = new pg.Client({ connectionString: database!.url });
    await db.connect();
    let committed: Set<string>;
    try {
      const { rows } = await db.query<{ id: string }>('select id from workout_logs where community_id = $1', [communityId]);
      committed = new Set(rows.map((r) => r.id));
    } finally {
      await db.end();
    }
    expect(committed.size).toBeGreaterThan(0);
    const deliveredIds = () => new Set(receiver.ofType('workout.logged').map((r) => r.payload.data.log_id as string));
    // A claim of a killed server comes due again when its lease (30 s) ends.
    const deadline = Date.now() + 90_000;
    while ([...committed].some((id) => !deliveredIds().has(id)) && Date.now() < deadline) await sleep(250);
    const delivered = deliveredIds();
    const missing = [...committed].filter((id) => !delivered.has(id));
    const invented = [...delivered].filter((id) => !committed.has(id));
    expect(missing.length, report('committed logs never delivered', missing)).toBe(0);
    expect(invented.length, report('events for logs that do not exist', invented)).toBe(0);
    const bodies = new Map<string, string>();
    const changed: string[] = [];
    for (const r of receiver.received) {
      verified(endpointSecret, r);
      const id = r.headers['webhook-id']!;
      if (bodies.has(id) && bodies.get(id) !== r.body) changed.push(id);
      bodies.set(id, r.body);
    }
    // Receivers dedupe by webhook-id: a second delivery of one event must be the same body.
    expect(changed.length, report('events re-sent with another body', changed)).toBe(0);
    console.log(`[crash suite] outgoing events: ${committed.size} logs in the community, ${receiver.received.length} deliveries received, ${receiver.received.length - bodies.size} of them repeats`);
  }, 120_000);
});
