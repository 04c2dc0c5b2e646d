import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type DatabaseHandle } from './client.js';

// One fresh in-memory database for the file: every test names its own tables.
let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openPglite({});
}, 60_000);
afterAll(() => handle.close());

const preparedTexts = async () =>
  (await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(handle.db)).rows.map((r) => r.statement);

describe('queries with parameters on the embedded database', () => {
  it('run as one named prepared statement per text, reused by every call, with PGlite’s own types both ways', async () => {
    const at = new Date('2026-11-28T10:00:00.123Z');
    const ids = ['01a22234-ac37-76ff-bdee-96e198083206', '01a22234-ac38-75a8-9f03-df41267b158c'];
    for (const n of [1, 2, 3]) {
      // int8 as a JS number (counts, sums of cents), a BigInt only past 2^53, as PGlite reads it.
      const { rows } = await sql<{ n: number; doc: unknown; at: Date; ids: string[]; cents: number; big: bigint }>`
        select ${n}::int + 1 as n, ${JSON.stringify({ n })}::jsonb as doc, ${at}::timestamptz as at, ${ids}::uuid[] as ids,
               ${n * 1000}::bigint as cents, ${'9007199254740993'}::bigint as big`.execute(handle.db);
      expect(rows).toEqual([{ n: n + 1, doc: { n }, at, ids, cents: n * 1000, big: 9007199254740993n }]);
    }
    const texts = (await preparedTexts()).filter((t) => t.includes('as big'));
    expect(texts).toHaveLength(1);
  });

  it('answer a database error with its code and leave the connection usable, in a transaction and out of one', async () => {
    await expect(sql`select ${'not a uuid'}::uuid as id`.execute(handle.db)).rejects.toMatchObject({ code: '22P02' });
    expect((await sql<{ n: number }>`select ${41}::int + 1 as n`.execute(handle.db)).rows).toEqual([{ n: 42 }]);

    await sql`create table pool_errors (id int primary key)`.execute(handle.db);
    await expect(
      handle.db.transaction().execute(async (trx) => {
        await sql`insert into pool_errors values (${1})`.execute(trx);
        await sql`insert into pool_errors values (${1})`.execute(trx);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    // The transaction rolled back whole; the same statement works after it.
    await sql`insert into pool_errors values (${2})`.execute(handle.db);
    expect((await sql<{ id: number }>`select id from pool_errors where id > ${0} order by id`.execute(handle.db)).rows).toEqual([{ id: 2 }]);
  });

  it('prepare statements again once a table changed shape, also inside the transaction that changed it', async () => {
    await sql`create table pool_shapes (a int)`.execute(handle.db);
    await sql`insert into pool_shapes values (1)`.execute(handle.db);
    const select = () => sql<Record<string, unknown>>`select * from pool_shapes where a = ${1}`.execute(handle.db);
    expect((await select()).rows).toEqual([{ a: 1 }]);

    await sql`alter table pool_shapes add column b int default 7`.execute(handle.db);
    expect((await select()).rows).toEqual([{ a: 1, b: 7 }]);

    const inside = await handle.db.transaction().execute(async (trx) => {
      await sql`alter table pool_shapes add column c int default 8`.execute(trx);
      return (await sql`select * from pool_shapes where a = ${1}`.execute(trx)).rows;
    });
    expect(inside).toEqual([{ a: 1, b: 7, c: 8 }]);
    expect((await select()).rows).toEqual([{ a: 1, b: 7, c: 8 }]);

    // DDL the text does not show (a function's): the statement fails as stale, is prepared
    // again and runs once more outside a transaction; inside one, the transaction fails.
    await sql`create function pool_widen(col text) returns void language plpgsql as $$
      begin execute format('alter table pool_shapes add column %I int default 9', col); end $$`.execute(handle.db);
    expect((await select()).rows).toEqual([{ a: 1, b: 7, c: 8 }]);
    await sql`select pool_widen('d')`.execute(handle.db);
    expect((await select()).rows).toEqual([{ a: 1, b: 7, c: 8, d: 9 }]);
    await expect(
      handle.db.transaction().execute(async (trx) => {
        await sql`select pool_widen('e')`.execute(trx);
        await sql`select * from pool_shapes where a = ${1}`.execute(trx);
      }),
    ).rejects.toMatchObject({ code: '0A000' });
    expect((await select()).rows).toEqual([{ a: 1, b: 7, c: 8, d: 9 }]);
  });

  it('keep at most 128 statements, closing the least recently used, which prepares again when it comes back', async () => {
    await sql`create table pool_many (n int)`.execute(handle.db);
    await sql`insert into pool_many values (1)`.execute(handle.db);
    for (let i = 0; i < 200; i++) {
      const { rows } = await sql<{ n: number }>`select n + ${i}::int as n from pool_many where n = ${1} and ${sql.lit(i)} = ${sql.lit(i)}`.execute(handle.db);
      expect(rows).toEqual([{ n: 1 + i }]);
    }
    expect(await preparedTexts()).toHaveLength(128);
    expect((await sql<{ n: number }>`select n + ${0}::int as n from pool_many where n = ${1} and ${sql.lit(0)} = ${sql.lit(0)}`.execute(handle.db)).rows).toEqual([{ n: 1 }]);
    expect((await preparedTexts()).some((t) => t.includes('0 = 0'))).toBe(true);
  });
});
