import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase, migrationsBefore } from './fresh-database.js';

/**
 * Migration 0041 (idempotency_keys partitioned by day) on a database holding keys as the
 * build before stored them, in one table under a unique (scope, key). A database of its own,
 * migrated up to 0040, filled, then migrated again.
 */
describe('migration 0041 on the keys stored before it', () => {
  it('keeps every key of the last 30 days with its answer, each in the partition of its day, and leaves older ones behind', async () => {
    const { handle, drop } = await freshDatabase('m0041', 3);
    const db = handle.db;
    try {
      await migrateToLatest(db, migrationsBefore('0041'));
      await sql`insert into idempotency_keys (scope, key, request_hash, state, status_code, content_type, response_body, created_at) values
        ('creator:a', 'now', 'h1', 'done', 201, 'application/json', '{"a":1}', now()),
        ('creator:a', 'yesterday', 'h2', 'data', 201, 'application/json', '{"b":2}', now() - interval '23 hours'),
        ('member:b', 'claimed', 'h3', 'in_progress', null, null, null, now() - interval '3 days'),
        ('member:b', 'month-ago', 'h4', 'done', 400, 'application/json', '{}', now() - interval '31 days')`.execute(db);

      await migrateToLatest(db);

      const { rows } = await sql<{ key: string; state: string; response_body: string | null; partition: string }>`
        select k.key, k.state, k.response_body, k.tableoid::regclass::text as partition from idempotency_keys k order by k.created_at desc`.execute(db);
      expect(rows.map((r) => [r.key, r.state, r.response_body])).toEqual([
        ['now', 'done', '{"a":1}'],
        ['yesterday', 'data', '{"b":2}'],
        ['claimed', 'in_progress', null],
      ]);
      // Each in the partition of its own day, none in the default one.
      const { rows: days } = await sql<{ key: string; partition: string }>`
        select key, tribes_key_partition(tribes_key_partition_start(created_at)) as partition from idempotency_keys`.execute(db);
      for (const r of rows) expect(r.partition).toBe(days.find((d) => d.key === r.key)!.partition);
      // Today's and the next day's are ready.
      const { rows: ahead } = await sql<{ missing: number }>`select count(*)::int as missing from unnest(tribes_key_starts(1)) h
        where to_regclass(tribes_key_partition(h)) is null`.execute(db);
      expect(ahead[0]!.missing).toBe(0);
      // A key that held an answer still refuses a second writer of it.
      const { rows: held } = await sql<{ key: string }>`select key from tribes_keys_locked(array['creator:a', 'creator:a'], array['now', 'yesterday'], 24) order by key`.execute(db);
      expect(held.map((r) => r.key)).toEqual(['now', 'yesterday']);
    } finally {
      await drop();
    }
  });
});
