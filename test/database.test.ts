import net from 'node:net';
import { sql, type MigrationResultSet } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectPostgres } from '../src/db/client.js';
import { toAppError } from '../src/http/error-handler.js';
import { migrateToLatest, retryingCatalogRaces } from '../src/db/migrate.js';
import { warnAboutSettings } from '../src/db/open.js';
import { buildTestApp, json, openTestDatabase, runSchemaName } from './helpers.js';

const postgresUrl = inject('postgresUrl');
const fakeKey = { authorization: `Bearer tribes_sk_${'a'.repeat(40)}` };

describe('migrations', () => {
  it('are idempotent: running them on a migrated database applies nothing', async () => {
    const database = await openTestDatabase();
    try {
      expect(await migrateToLatest(database.db)).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('are followed by a warning when the PostgreSQL server runs without autovacuum, and by none when it runs it or the database is embedded', async () => {
    const database = await openTestDatabase();
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    try {
      await warnAboutSettings(database, logger);
      // The machine's own setting decides which case this run checks (CI's server runs without it).
      const off =
        database.kind === 'postgres' &&
        (await sql<{ autovacuum: string }>`select current_setting('autovacuum') as autovacuum`.execute(database.db)).rows[0]!.autovacuum === 'off';
      const warnings = lines.map((line) => JSON.parse(line) as { level: number; autovacuum?: string; msg: string }).filter((l) => l.level === 40);
      expect(warnings.map((w) => w.autovacuum)).toEqual(off ? ['off'] : []);
      if (off) expect(warnings[0]!.msg).toMatch(/turn autovacuum on/);
    } finally {
      await database.close();
    }
  });

  it('are tried again when another schema\'s DDL broke the bookkeeping check, but never after a file failed', async () => {
    const raced = (code: string) => Object.assign(new Error('column "last_active_at" of relation "creator_members" does not exist'), { code });
    const attempts = (answers: MigrationResultSet[]) => {
      let n = 0;
      return { run: async () => answers[Math.min(n++, answers.length - 1)]!, count: () => n };
    };
    for (const code of ['3F000', '42P01', '42703']) {
      const flaky = attempts([{ error: raced(code) }, { results: [] }]);
      expect(await retryingCatalogRaces(flaky.run)).toEqual({ results: [] });
      expect(flaky.count()).toBe(2);
    }
    const always = attempts([{ error: raced('42703') }]);
    expect((await retryingCatalogRaces(always.run)).error).toBeDefined();
    expect(always.count()).toBe(3);
    const fileFailed = attempts([{ error: raced('42703'), results: [{ migrationName: '0032_member_activity', direction: 'Up', status: 'Error' }] }]);
    expect((await retryingCatalogRaces(fileFailed.run)).error).toBeDefined();
    expect(fileFailed.count()).toBe(1);
    const otherError = attempts([{ error: Object.assign(new Error('syntax'), { code: '42601' }) }]);
    await retryingCatalogRaces(otherError.run);
    expect(otherError.count()).toBe(1);
  });
});

describe.runIf(postgresUrl)('migrations on a PostgreSQL server', () => {
  it('apply each file once when two processes migrate one fresh schema together', async () => {
    const schema = runSchemaName('migrate');
    const base = new URL(postgresUrl!);
    base.searchParams.delete('options');
    const admin = connectPostgres({ url: base.toString(), poolMax: 1, statementTimeoutMs: 60_000 });
    await admin.db.schema.createSchema(schema).execute();
    const url = new URL(base);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const a = connectPostgres({ url: url.toString(), poolMax: 2, statementTimeoutMs: 60_000 });
    const b = connectPostgres({ url: url.toString(), poolMax: 2, statementTimeoutMs: 60_000 });
    try {
      const [ranA, ranB] = await Promise.all([migrateToLatest(a.db), migrateToLatest(b.db)]);
      const all = [...ranA, ...ranB].sort();
      expect(new Set(all).size).toBe(all.length);
      expect(all[0]).toBe('0001_foundation');
      const recorded = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(a.db);
      expect(recorded.rows[0]!.n).toBe(all.length);
    } finally {
      await a.close();
      await b.close();
      await admin.db.schema.dropSchema(schema).cascade().execute();
      await admin.close();
    }
  });

  it('turns a statement over the statement timeout into a 503-class error', async () => {
    const slow = connectPostgres({ url: postgresUrl!, poolMax: 1, statementTimeoutMs: 100 });
    try {
      const err = await sql`select pg_sleep(2)`.execute(slow.db).catch((e: unknown) => e);
      expect(toAppError(err)?.code).toBe('service_unavailable');
    } finally {
      await slow.close();
    }
  });
});

describe('database unavailable', () => {
  it('answers /ready and API calls with 503 in the error envelope while /health stays 200', async () => {
    // Nothing listens on port 1: every connection attempt is refused.
    const database = connectPostgres({ url: 'postgres://postgres@127.0.0.1:1/none', poolMax: 1, statementTimeoutMs: 1000 });
    const t = await buildTestApp({ database, simulatorDatabase: await openTestDatabase() });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      const ready = await t.app.inject({ method: 'GET', url: '/ready' });
      expect(ready.statusCode).toBe(503);
      expect(json(ready).error.code).toBe('service_unavailable');
      const api = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: fakeKey });
      expect(api.statusCode).toBe(503);
      expect(json(api)).toMatchObject({ success: false, error: { code: 'service_unavailable' } });
      expect(api.headers['retry-after']).toBe('5');
      // Member requests sent together share one token lookup (group commit): all get the 503.
      const memberToken = { authorization: `Bearer tribes_mt_${'a'.repeat(40)}` };
      const members = await Promise.all([1, 2, 3].map(() => t.app.inject({ method: 'GET', url: '/api/v1/member/me', headers: memberToken })));
      expect(members.map((r) => r.statusCode)).toEqual([503, 503, 503]);
    } finally {
      await t.close();
    }
  });
});

/** A TCP relay to PostgreSQL that a test can cut and restore, to play an outage. */
function relay(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  const listen = (port: number) =>
    new Promise<number>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => resolve((server!.address() as net.AddressInfo).port));
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server!.close(() => resolve());
    });
  return { listen, cut };
}

describe.runIf(postgresUrl)('database outage on a PostgreSQL server', () => {
  let proxy: ReturnType<typeof relay>;
  let port: number;
  beforeAll(async () => {
    proxy = relay(new URL(postgresUrl!));
    port = await proxy.listen(0);
  });
  afterAll(() => proxy.cut().catch(() => undefined));

  it('answers 503 while the database is gone and recovers without a restart', async () => {
    const url = new URL(postgresUrl!);
    url.host = `127.0.0.1:${port}`;
    const database = connectPostgres({ url: url.toString(), poolMax: 2, statementTimeoutMs: 2000 });
    const t = await buildTestApp({ database, simulatorDatabase: await openTestDatabase() });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
      await proxy.cut();
      expect((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(503);
      expect((await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: fakeKey })).statusCode).toBe(503);
      await proxy.listen(port);
      expect((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: fakeKey })).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });
});
