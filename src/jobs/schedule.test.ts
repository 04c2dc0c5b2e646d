import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEndpoint, startReceiver } from '../../test/events-kit.js';
import { freshDatabase } from '../../test/fresh-database.js';
import { buildTestApp, createCreator, testConfig, type TestApp } from '../../test/helpers.js';
import { ConfigError, loadConfig } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';

// The API node runs no jobs (JOBS=false); the worker beside it, on the same database, does.
// A database of this file's own: a worker's jobs are every creator's, and on a shared
// PostgreSQL they would send other test files' deliveries.
const polling = { ...testConfig().events, pollMs: 50 };
let api: TestApp;
let drop: () => Promise<void>;
beforeAll(async () => {
  const fresh = await freshDatabase('jobs', 4);
  drop = fresh.drop;
  await migrateToLatest(fresh.handle.db);
  api = await buildTestApp({ database: fresh.handle, config: { jobs: false, events: polling } });
});
afterAll(async () => {
  await api.close();
  await drop();
});

it('an API node with JOBS=false sends nothing; a worker on the same database sends what it recorded, and serves no API', async () => {
  const creator = await createCreator(api);
  const receiver = await startReceiver();
  const endpoint = await createEndpoint(api, creator, { url: receiver.url });
  expect((await api.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers })).statusCode).toBe(201);
  // Six of its polls would have sent it.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(receiver.received).toHaveLength(0);

  const worker = await buildTestApp({ database: api.database, config: { worker: true, jobs: true, events: polling } });
  try {
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(1);
    expect(receiver.received[0]!.payload.type).toBe('ping');
    expect((await worker.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const refused = await worker.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: creator.headers });
    expect(refused.statusCode).toBe(404);
    expect(refused.json().error.message).toContain('worker');
  } finally {
    await worker.app.close();
    await worker.simulator.close();
    await receiver.close();
  }
});

it('refuses a worker without a shared PostgreSQL, or with jobs turned off, or with a simulator of its own', () => {
  expect(() => loadConfig({}, { worker: true })).toThrow(/DATABASE_URL/);
  const url = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };
  expect(() => loadConfig({ ...url, JOBS: 'false' }, { worker: true })).toThrow(/unset JOBS/);
  expect(() => loadConfig(url, { worker: true })).toThrow(/PROCESSOR_SIM_IN_PROCESS=false/);
  expect(loadConfig({ ...url, PROCESSOR_SIM_IN_PROCESS: 'false' }, { worker: true })).toMatchObject({ worker: true, jobs: true });
  expect(() => loadConfig({ JOBS: 'no' })).toThrow(ConfigError);
  expect(loadConfig({ JOBS: 'FALSE' }).jobs).toBe(false);
});
