import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, type TestApp } from '../../test/helpers.js';
import { compiledQueries } from './compiled.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

describe('queries compiled once', () => {
  it('answer each call with its own arguments, building the query only the first time', async () => {
    const [a, b] = [await createCreator(t, { name: 'Ana' }), await createCreator(t, { name: 'Bruno' })];
    const queries = compiledQueries('compiled_test_names', { prepare: true });
    let builds = 0;
    const nameOf = async (id: string) => {
      const rows = await queries.rows(t.database.db, 'by_id', [id], (i) => {
        builds++;
        return t.database.db.selectFrom('creators').select('name').where('id', '=', i);
      });
      return rows[0]?.name;
    };
    expect(await nameOf(a.id)).toBe('Ana');
    expect(await nameOf(b.id)).toBe('Bruno');
    expect(await nameOf('00000000-0000-0000-0000-000000000000')).toBeUndefined();
    expect(builds).toBe(1);
  });

  it('keep shapes apart and take raw sql templates too', async () => {
    const queries = compiledQueries('compiled_test_shapes');
    const db = t.database.db;
    expect(await queries.rows(db, 'sum', [2, 3], (x, y) => sql<{ n: number }>`select ${x}::int + ${y}::int as n`)).toEqual([{ n: 5 }]);
    expect(await queries.rows(db, 'product', [2, 3], (x, y) => sql<{ n: number }>`select ${x}::int * ${y}::int as n`)).toEqual([{ n: 6 }]);
    expect(await queries.rows(db, 'sum', [10, 20], (x, y) => sql<{ n: number }>`select ${x}::int - ${y}::int as n`)).toEqual([{ n: 30 }]);
  });

  it('refuse a builder that leaves an argument out of the query, as one that branches on its value would', async () => {
    const queries = compiledQueries('compiled_test_refused');
    const db = t.database.db;
    const branching = (status: string | undefined) =>
      queries.rows(db, 'maybe', [status], (s) => db.selectFrom('creators').select('id').$if(s === undefined, (q) => q.where('name', '=', 'x')));
    await expect(branching('active')).rejects.toThrow(/every argument must be a parameter/);
    expect(() => compiledQueries('Not A Name')).toThrow(/lower-case/);
  });
});
