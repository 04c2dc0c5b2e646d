import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase } from './fresh-database.js';
import { buildTestApp, createCreator, type TestApp, type TestCreator } from './helpers.js';
import { addMembersInBulk, placeIn } from './members-kit.js';

/**
 * A prepared statement saves PostgreSQL its planning only once it settles on the generic plan
 * (db/prepared.ts pageWindow). With a page's LIMIT and OFFSET as parameters the generic plan is
 * costed for a tenth of the creator's rows, never wins, and every execution is planned again at
 * bind. This needs a creator whose size the statistics show, so it runs on a database of its
 * own: one app on one connection (the statements asked about are the ones it prepared), one
 * creator with 20,000 members. PostgreSQL only (the embedded database prepares nothing).
 */
const postgresUrl = inject('postgresUrl');

describe.runIf(postgresUrl)('prepared page statements on PostgreSQL', () => {
  let t: TestApp;
  let drop: () => Promise<void>;
  let creator: TestCreator;

  beforeAll(async () => {
    const fresh = await freshDatabase('plans', 1);
    drop = fresh.drop;
    await migrateToLatest(fresh.handle.db);
    t = await buildTestApp({ database: fresh.handle });
    creator = await createCreator(t);
    const place = await placeIn(t, creator);
    await addMembersInBulk(t, creator, place, 20_000, { joinedAt: new Date() });
    await sql`analyze`.execute(t.database.db);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await drop?.();
  });

  async function plansOf(path: string, pattern: string) {
    for (let i = 0; i < 10; i++) {
      const res = await t.app.inject({ method: 'GET', url: path, headers: creator.headers });
      expect(res.statusCode, res.body).toBe(200);
    }
    const { rows } = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
      select statement, generic_plans::int, custom_plans::int from pg_prepared_statements where name like ${pattern}`.execute(t.database.db);
    return rows;
  }

  it('plans the member list once per connection: a first page whole, a deeper page and a search for their rows', async () => {
    const first = await plansOf('/api/v1/members?limit=20', 'directory_rows%');
    expect(first).toHaveLength(1);
    // The first five executions are planned for their values, then the generic plan is kept.
    expect(first[0]).toMatchObject({ custom_plans: 5, generic_plans: 5 });
    // A deeper page and a search pick their ids in a statement planned each time (not prepared), then read the rows by a second one.
    const rowsByIds = (await plansOf('/api/v1/members?limit=20&page=2', 'directory_rows%')).find((r) => r.statement !== first[0]!.statement);
    expect(rowsByIds).toMatchObject({ custom_plans: 5, generic_plans: 5 });
    const searched = (await plansOf('/api/v1/members?q=bulk', 'directory_rows%')).filter((r) => r.statement !== first[0]!.statement && r.statement !== rowsByIds!.statement);
    expect(searched).toEqual([expect.objectContaining({ custom_plans: 5, generic_plans: 5 })]);
  });

  it('plans the first page of the subscriptions list once per connection, and a deeper page on every request', async () => {
    const first = await plansOf('/api/v1/subscriptions?limit=20', 'subscriptions_list_all%');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ custom_plans: 5, generic_plans: 5 });
    const deeper = (await plansOf('/api/v1/subscriptions?limit=20&page=2', 'subscriptions_list_all%')).find((r) => r.statement !== first[0]!.statement);
    expect(deeper).toMatchObject({ custom_plans: 10, generic_plans: 0 });
  });
});
