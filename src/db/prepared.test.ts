import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { connectPostgres } from './client.js';
import { preparedName } from './prepared.js';

describe('prepared statement names', () => {
  it('names a marked text by its marker and a digest, and leaves unmarked texts alone', () => {
    const a = '/*prepare:member_token*/ select 1';
    const b = '/*prepare:member_token*/ select 2';
    expect(preparedName(a)).toMatch(/^member_token_[0-9a-f]{12}$/);
    expect(preparedName(`${a}`)).toBe(preparedName(a));
    expect(preparedName(b)).not.toBe(preparedName(a));
    expect(preparedName('select 1')).toBeUndefined();
    expect(preparedName('/*prepare:Bad-Name*/ select 1')).toBeUndefined();
  });

  const postgresUrl = inject('postgresUrl');
  it.runIf(postgresUrl)('runs marked queries as named statements on PostgreSQL, parsed once per connection', async () => {
    const { db, close } = connectPostgres({ url: postgresUrl!, poolMax: 1, statementTimeoutMs: 5_000 });
    try {
      for (const n of [1, 2, 3]) expect((await sql<{ n: number }>`/*prepare:prepared_test*/ select ${n}::int as n`.execute(db)).rows).toEqual([{ n }]);
      await sql`select ${1}::int as unmarked`.execute(db);
      const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(db);
      expect(rows.map((r) => r.name)).toEqual([preparedName('/*prepare:prepared_test*/ select $1::int as n')]);
    } finally {
      await close();
    }
  });
});
