import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectPostgres, type DatabaseHandle } from '../src/db/client.js';
import { createReplicaSet, lsnValue, type ReplicaSet, type ReplicaState } from '../src/db/replicas.js';
import { buildTestApp, createCommunity, createCreator, json, type TestApp, type TestCreator } from './helpers.js';

const url = inject('postgresUrl');
const redisUrl = process.env.TEST_REDIS_URL;

/**
 * A stand-in replica: a second pool on the test database (a streaming standby cannot be made
 * inside the test run; `npm run cluster -- --proof` runs a real one). Every checkout from it
 * is counted, so a test sees which pool a request's queries went to.
 */
function standIn(database: string) {
  const handle = connectPostgres({ url: database, poolMax: 3, statementTimeoutMs: 15_000 });
  let state: ReplicaState = 'ok';
  let checkouts = 0;
  handle.pool!.on('acquire', () => checkouts++);
  const replicas: ReplicaSet = {
    start: async () => {},
    tick: async () => {},
    pick: () => (state === 'ok' ? handle.pool! : null),
    statuses: () => [{ name: 'stand-in:5432', state, lagMs: state === 'down' ? null : 0, reads: 0, failedReads: 0 }],
    suspect: () => {
      state = 'down';
    },
    close: () => handle.close(),
  };
  return { replicas, checkouts: () => checkouts, set: (s: ReplicaState) => (state = s) };
}

describe.skipIf(!url)('read replicas (DATABASE_REPLICA_URL)', () => {
  let primary: DatabaseHandle;
  let replica: ReturnType<typeof standIn>;
  let t: TestApp;
  beforeAll(async () => {
    primary = connectPostgres({ url: url!, poolMax: 5, statementTimeoutMs: 15_000, routeReads: true });
    replica = standIn(url!);
    // Pinned for REPLICA_MAX_LAG_MS + 1 s after a write.
    t = await buildTestApp({ database: primary, replicas: replica.replicas, config: { replicaMaxLagMs: 200 } });
  });
  afterAll(async () => {
    await t.close();
    await replica.replicas.close();
  });

  /** Checkouts from the replica made while `request` ran. */
  async function onReplica(creator: TestCreator, path: string): Promise<number> {
    const before = replica.checkouts();
    const res = await t.app.inject({ method: 'GET', url: path, headers: creator.headers });
    expect(res.statusCode).toBe(200);
    return replica.checkouts() - before;
  }

  it('serves the member list, metrics and post list from a healthy replica, and every write and other read from the primary', async () => {
    const creator = await createCreator(t);
    // The creator's own writes pin them to the primary for a moment: wait it out.
    await new Promise((resolve) => setTimeout(resolve, 1300));
    for (const path of ['/api/v1/members', '/api/v1/creator-metrics', '/api/v1/posts', '/api/v1/members/export.csv']) expect(await onReplica(creator, path)).toBeGreaterThan(0);
    expect(await onReplica(creator, '/api/v1/communities')).toBe(0);
    const before = replica.checkouts();
    await createCommunity(t, creator);
    expect(replica.checkouts()).toBe(before);
  });

  it('sends a creator who just wrote to the primary (read-your-writes), and back to the replica once the lag bound has passed', async () => {
    const creator = await createCreator(t);
    await createCommunity(t, creator);
    expect(await onReplica(creator, '/api/v1/members')).toBe(0);
    // Another creator who wrote nothing lately is not held back by it.
    const other = await createCreator(t);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(await onReplica(other, '/api/v1/members')).toBeGreaterThan(0);
    expect(await onReplica(creator, '/api/v1/members')).toBeGreaterThan(0);
  });

  it('skips a replica that is down or lagging, says so on /ready and /metrics, and uses it again when it is back', async () => {
    const creator = await createCreator(t);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    for (const state of ['down', 'lagging'] as const) {
      replica.set(state);
      expect(await onReplica(creator, '/api/v1/members')).toBe(0);
      const ready = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(ready.statusCode).toBe(200);
      expect(json(ready).data.replicas).toEqual([{ name: 'stand-in:5432', state, lag_ms: state === 'down' ? null : 0 }]);
      expect((await t.app.inject({ method: 'GET', url: '/metrics' })).body).toContain(`replica_up{replica="stand-in:5432"} ${state === 'down' ? 0 : 0.5}`);
    }
    replica.set('ok');
    expect(await onReplica(creator, '/api/v1/members')).toBeGreaterThan(0);
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).body).toContain('replica_up{replica="stand-in:5432"} 1');
  });

  it('reads the primary when the replica fails under a read, and sets it aside until it is measured again', async () => {
    // A replica that is gone while still counted `ok` (the monitor has not ticked yet).
    const gone = standIn('postgres://postgres@127.0.0.1:1/test');
    const app = await buildTestApp({ database: connectPostgres({ url: url!, poolMax: 3, statementTimeoutMs: 15_000, routeReads: true }), replicas: gone.replicas });
    try {
      const creator = await createCreator(app);
      await new Promise((resolve) => setTimeout(resolve, 1300));
      const listed = await app.app.inject({ method: 'GET', url: '/api/v1/members', headers: creator.headers });
      expect(listed.statusCode).toBe(200);
      expect(gone.replicas.statuses()[0]!.state).toBe('down');
    } finally {
      await app.close();
      await gone.replicas.close();
    }
  });

  it.runIf(redisUrl)('pins a writer across nodes through Redis: a write on node A sends the next read on node B to the primary', async () => {
    const config = { replicaMaxLagMs: 200, rateLimit: { ...t.config.rateLimit, redisUrl } };
    const a = await buildTestApp({ database: primary, replicas: replica.replicas, config });
    const bReplica = standIn(url!);
    const b = await buildTestApp({ database: connectPostgres({ url: url!, poolMax: 3, statementTimeoutMs: 15_000, routeReads: true }), replicas: bReplica.replicas, config });
    try {
      const creator = await createCreator(a);
      await new Promise((resolve) => setTimeout(resolve, 1300));
      await createCommunity(a, creator);
      const before = bReplica.checkouts();
      const listed = await b.app.inject({ method: 'GET', url: '/api/v1/members', headers: creator.headers });
      expect(listed.statusCode).toBe(200);
      expect(bReplica.checkouts()).toBe(before);
    } finally {
      await a.app.close();
      await a.simulator.close();
      await b.close();
      await bReplica.replicas.close();
    }
  });

  it('measures a server that is not a standby as down, so nothing reads from it', async () => {
    const set = createReplicaSet({ primary, urls: [url!], maxLagMs: 1000, poolMax: 1, statementTimeoutMs: 5000, tickMs: 200 });
    await set.start();
    expect(set.statuses()[0]).toMatchObject({ state: 'down', lagMs: null });
    expect(set.pick()).toBeNull();
    await set.close();
  });
});

it('orders WAL positions as PostgreSQL does', () => {
  expect(lsnValue('0/16B3740') < lsnValue('0/16B3748')).toBe(true);
  expect(lsnValue('1/0') > lsnValue('0/FFFFFFFF')).toBe(true);
  expect(lsnValue('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
});
