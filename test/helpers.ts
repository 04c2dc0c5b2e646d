import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { inject } from 'vitest';
import { buildApp, type AppDeps } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import type { ReplicaSet } from '../src/db/replicas.js';
import { connectPostgres, openPglite, type DatabaseHandle } from '../src/db/client.js';
import { newId } from '../src/db/ids.js';
import { randomBase62 } from '../src/http/auth.js';
import { generateMemberToken } from '../src/modules/members/member-auth.js';
import { createProcessor, createStripeClient, type Processor } from '../src/processor/processor.js';
import { startSimulator, type RunningSimulator } from '../src/processor/simulator/index.js';
import { checkEveryAnswer, contractOf } from './contract.js';
import { assertNoSecretsStored, unlessDatabaseGone, writesFrom } from './stored-secrets.js';
import type Stripe from 'stripe';

export const TEST_WEBHOOK_SECRET = 'whsec_test_secret';

export interface TestApp {
  app: FastifyInstance;
  database: DatabaseHandle;
  adminToken: string;
  config: Config;
  /** The processor simulator this app talks to, and an SDK client for tests to inspect it. */
  simulator: RunningSimulator;
  stripe: Stripe;
  /** The processor client the app's services call (tests may wrap its methods). */
  processor: Processor;
  close(): Promise<void>;
}

/**
 * This file's own database: a copy of the migrated PGlite data directory (removed again when
 * it is closed), or a pool on this run's PostgreSQL schema.
 */
export async function openTestDatabase(): Promise<DatabaseHandle> {
  const url = inject('postgresUrl');
  if (url) return connectPostgres({ url, poolMax: 5, statementTimeoutMs: 15_000 });
  const template = inject('pgliteTemplate');
  if (!template) throw new Error('global setup did not prepare a database');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-test-db-'));
  fs.cpSync(template, dir, { recursive: true });
  try {
    const handle = await openPglite({ dataDir: dir });
    return {
      ...handle,
      close: async () => {
        try {
          await handle.close();
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  const base = loadConfig({});
  return { ...base, rateLimit: { ...base.rateLimit, max: 1_000_000, signupsPerHour: 1_000_000 }, ...overrides };
}

export async function buildTestApp(
  opts: {
    config?: Partial<Config>;
    database?: DatabaseHandle;
    /** Where the simulator keeps its state when `database` is one it cannot use (a dead one). */
    simulatorDatabase?: DatabaseHandle;
    logger?: AppDeps['logger'];
    /** Listen on a port and have the simulator deliver its events here (end-to-end tests). */
    webhooks?: boolean;
    beforeReady?: (app: FastifyInstance) => void;
    /** The service's wall clock (activity, member status); the processor simulator keeps its own. */
    now?: () => Date;
    /** A built dashboard to serve (scripts/build-dashboard.ts into a folder of the test's). */
    dashboardDir?: string;
    /** Read replicas the heavy reads may go to (db/replicas.ts; tests stand one in). */
    replicas?: ReplicaSet;
  } = {},
): Promise<TestApp> {
  const database = opts.database ?? (await openTestDatabase());
  // Background schedules are off: tests run them when they mean to (outgoing events: t.app.events.drain()).
  const base = testConfig();
  const config = testConfig({ reconcileIntervalMs: 0, challengeRankingIntervalMs: 0, metricsHistoryIntervalMs: 0, metricsFoldIntervalMs: 0, events: { ...base.events, pollMs: 0 }, ...opts.config });
  const adminToken = `test_admin_${randomBase62(32)}`;
  // On a shared PostgreSQL every test file gets its own simulator schema (its own clock), named
  // after the run's so that the run's teardown drops it; on PGlite the file's database copy is
  // its own already.
  const simDb = opts.simulatorDatabase ?? database;
  const simSchema = simDb.kind === 'postgres' ? runSchemaName('sim') : undefined;
  const since = await writesFrom(database);
  const simulator = await startSimulator({
    db: simDb.db,
    port: 0,
    webhookSecret: TEST_WEBHOOK_SECRET,
    logger: false,
    ...(simSchema ? { schema: simSchema } : {}),
  });
  const stripe = createStripeClient({ ...config.processor, simHost: '127.0.0.1' }, simulator.port);
  const processor = createProcessor(stripe);
  const app = await buildApp({
    config,
    database,
    adminToken,
    logger: opts.logger ?? false,
    processor,
    webhookSecrets: [TEST_WEBHOOK_SECRET],
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.dashboardDir ? { dashboardDir: opts.dashboardDir } : {}),
    ...(opts.replicas ? { replicas: opts.replicas } : {}),
  });
  opts.beforeReady?.(app);
  await app.ready();
  // Every answer a test receives is held to the served OpenAPI document (test/contract.ts).
  checkEveryAnswer(app, () => contractOf(app));
  if (opts.webhooks) {
    // The simulator delivers events over HTTP, so this app listens on a free port.
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    simulator.setWebhookUrl(`http://127.0.0.1:${port}/api/v1/webhooks/processor`);
  }
  return {
    app,
    database,
    adminToken,
    config,
    simulator,
    stripe,
    processor,
    close: async () => {
      await app.close();
      await assertNoSecretsStored(database, since);
      await simulator.close();
      // Dropped now rather than at the run's end: Kysely's migrator reads the columns of every
      // table in the database before each migration, so each schema left standing made every
      // later file's simulator start slower (60 ms a look with ~100 of them).
      if (simSchema) await unlessDatabaseGone(simDb.db.schema.dropSchema(simSchema).ifExists().cascade().execute());
      if (simDb !== database) await simDb.close();
      await database.close();
    },
  };
}

/**
 * A fresh schema name for a test on PostgreSQL, `<run schema>_<purpose>_<random>`: the run's
 * teardown drops every schema so named, whether or not the test got to drop it.
 */
export function runSchemaName(purpose: string): string {
  const run = inject('runSchema');
  if (!run) throw new Error('no PostgreSQL run schema (TEST_DATABASE_URL is not set)');
  return `${run}_${purpose}_${uniq()}`;
}

/** A short random suffix: tests build their own tenants, so names never collide across files or runs. */
export const uniq = (): string => crypto.randomBytes(5).toString('hex');

export const json = <T = any>(res: LightMyRequestResponse): T => JSON.parse(res.body) as T;

export interface TestCreator {
  id: string;
  apiKey: string;
  apiKeyId: string;
  email: string;
  headers: { authorization: string };
}

/**
 * A creator made through the admin API, whose processor account is then onboarded the way an
 * outside suite does it (the simulator's DESIGN §6 helper, what pressing Continue on the
 * hosted page does), unless `onboarded: false`. An app that does not listen for events learns
 * of it when it next reads the account (a checkout's refusal is confirmed by a fresh read).
 */
export async function createCreator(t: TestApp, input: { name?: string; email?: string; onboarded?: boolean } = {}): Promise<TestCreator> {
  const email = input.email ?? `creator-${uniq()}@example.com`;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/admin/creators',
    headers: { authorization: `Bearer ${t.adminToken}` },
    payload: { name: input.name ?? 'Test Creator', email },
  });
  if (res.statusCode !== 201) throw new Error(`creator factory failed: ${res.statusCode} ${res.body}`);
  const data = json(res).data;
  if (input.onboarded !== false) await onboardAccount(t, data.creator.processor_account_id);
  return { id: data.creator.id, apiKey: data.api_key, apiKeyId: data.api_key_id, email, headers: { authorization: `Bearer ${data.api_key}` } };
}

/**
 * Completes a connected account's onboarding at the simulator (POST
 * /v1/test_helpers/accounts/{id}/onboard). An app that listens gets the `account.updated` it
 * causes from the simulator; to one that does not, the event is handed over here the way
 * the processor would send it (signed, to the webhook endpoint), so both know the account
 * can take charges.
 */
export async function onboardAccount(t: TestApp, accountId: string): Promise<void> {
  const res = await fetch(`${t.simulator.url}/v1/test_helpers/accounts/${accountId}/onboard`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  if (res.status !== 200) throw new Error(`onboarding failed: ${res.status} ${await res.text()}`);
  if (!t.app.server.listening) {
    const [event] = (await t.stripe.events.list({ type: 'account.updated', limit: 1 }, { stripeAccount: accountId })).data;
    if (event) await deliverEvent(t, event);
  }
  await t.app.tasks.idle();
}

/** Hands a processor event to the app's webhook endpoint, signed as the processor signs it. */
export async function deliverEvent(t: TestApp, event: object): Promise<void> {
  const payload = JSON.stringify(event);
  const signature = t.stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET });
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks/processor', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, payload });
  if (res.statusCode !== 200) throw new Error(`event delivery failed: ${res.statusCode} ${res.body}`);
}

export async function createCommunity(t: TestApp, creator: TestCreator, overrides: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/communities',
    headers: creator.headers,
    payload: { name: 'Força Total', slug: `forca-${uniq()}`, category: 'musculacao', ...overrides },
  });
  if (res.statusCode !== 201) throw new Error(`community factory failed: ${res.statusCode} ${res.body}`);
  return json(res).data as { id: string; slug: string; [k: string]: unknown };
}

export async function createTier(t: TestApp, creator: TestCreator, communityId: string, overrides: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/tiers',
    headers: creator.headers,
    payload: { community_id: communityId, name: 'Pro', price_cents: 4990, billing_period: 'monthly', ...overrides },
  });
  if (res.statusCode !== 201) throw new Error(`tier factory failed: ${res.statusCode} ${res.body}`);
  return json(res).data as { id: string; processor_price_id: string; [k: string]: unknown };
}

export interface TestMember {
  id: string;
  email: string;
  /** The password it signed up with, for login tests. */
  password: string;
  token: string;
  headers: { authorization: string };
}

/** A member signed up through the API, with its bearer token. */
export async function createMember(t: TestApp, overrides: { name?: string; email?: string; password?: string } = {}): Promise<TestMember> {
  const email = overrides.email ?? `member-${uniq()}@example.com`;
  const password = overrides.password ?? `pw-${uniq()}-long-enough`;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/member/signup',
    payload: { name: overrides.name ?? 'Maria Silva', email, password },
  });
  if (res.statusCode !== 201) throw new Error(`member factory failed: ${res.statusCode} ${res.body}`);
  const data = json(res).data;
  return { id: data.member.id, email, password, token: data.token, headers: { authorization: `Bearer ${data.token}` } };
}

/**
 * A member whose token is minted straight into the database: for tests that need a member
 * with a bearer token, not a sign-up (each sign-up is a deliberately slow password hash).
 * It has no password, so it cannot log in.
 */
export async function mintMember(t: TestApp, input: { name?: string; email?: string } = {}): Promise<TestMember> {
  const id = newId();
  const email = input.email ?? `member-${uniq()}@example.com`;
  await t.database.db.insertInto('members').values({ id, name: input.name ?? 'Maria Silva', email }).execute();
  const { token, hash } = generateMemberToken();
  await sql`insert into member_tokens (id, member_id, token_hash, expires_at) values (${newId()}, ${id}, ${hash}, now() + interval '30 days')`.execute(t.database.db);
  return { id, email, password: '', token, headers: { authorization: `Bearer ${token}` } };
}

/** The barbell bench press of the seeded catalog: a weighted exercise every creator can use. */
export const BENCH_PRESS_ID = '33b0a54f-7196-43fb-90b5-067f42ea28b6';

export async function createProgram(t: TestApp, creator: TestCreator, communityId: string, overrides: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/workout-programs',
    headers: creator.headers,
    payload: { community_id: communityId, name: 'Força 12 semanas', duration_weeks: 12, frequency_per_week: 3, level: 'beginner', goal: 'strength', ...overrides },
  });
  if (res.statusCode !== 201) throw new Error(`program factory failed: ${res.statusCode} ${res.body}`);
  return json(res).data as { id: string; community_id: string; [k: string]: unknown };
}

export async function createWorkout(t: TestApp, creator: TestCreator, programId: string, overrides: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/workout-programs/${programId}/workouts`,
    headers: creator.headers,
    payload: { name: 'Treino A', exercises: [{ exercise_id: BENCH_PRESS_ID, sets: 3, reps: '8-12', load_kg: 40, rest_sec: 90 }], ...overrides },
  });
  if (res.statusCode !== 201) throw new Error(`workout factory failed: ${res.statusCode} ${res.body}`);
  return json(res).data as { id: string; program_id: string; [k: string]: unknown };
}

export async function createExercise(t: TestApp, creator: TestCreator, overrides: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/exercises',
    headers: creator.headers,
    payload: { name: `Custom press ${uniq()}`, muscle_group: 'chest', equipment: ['dumbbell'], kind: 'weighted', ...overrides },
  });
  if (res.statusCode !== 201) throw new Error(`exercise factory failed: ${res.statusCode} ${res.body}`);
  return json(res).data as { id: string; [k: string]: unknown };
}
