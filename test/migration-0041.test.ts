import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase, migrationsBefore } from './fresh-database.js';

/**
 * Migration 0041 (idempotency_keys partitioned by hour) on a database holding keys as the
 * build before stored them, in one table under a unique (scope, key). A database of its own,
 * migrated up to 0040, filled, then migrated again.
 */
describe('migration 0041 on the keys stored before it', () => {
  it('keeps every key of the last 30 days with its answer, each in its own hour, and leaves older ones behind', async () => {
    const { handle, drop } = await freshDatabase('m0041', 3);
    const db = handle.db;
    try {
      await migrateToLatest(db, migrationsBefore('0041'));
      await sql`insert into idempotency_keys (scope, key, request_hash, state, status_code, content_type, response_body, created_at) values
        ('creator:a', 'now', 'h1', 'done', 201, 'application/json', '{"a":1}', now()),
        ('creator:a', 'yesterday', 'h2', 'data', 201, 'application/json', '{"b":2}', now() - interval '23 hours'),
        ('member:b', 'claimed', 'h3', 'in_progress', null, null, null, now() - interval '3 hours'),
        ('member:b', 'month-ago', 'h4', 'done', 400, 'application/json', '{}', now() - interval '31 days')`.execute(db);

      await migrateToLatest(db);

      const { rows } = await sql<{ key: string; state: string; response_body: string | null; partition: string }>`
        select k.key, k.state, k.response_body, k.tableoid::regclass::text as partition from idempotency_keys k order by k.created_at desc`.execute(db);
      expect(rows.map((r) => [r.key, r.state, r.response_body])).toEqual([
        ['now', 'done', '{"a":1}'],
        ['claimed', 'in_progress', null],
        ['yesterday', 'data', '{"b":2}'],
      ]);
      // Each in the partition of its own hour, none in the default one.
      expect(rows.every((r) => /^idempotency_keys_\d{8}_\d{2}$/.test(r.partition))).toBe(true);
      expect(new Set(rows.map((r) => r.partition)).size).toBe(3);
      // The next two hours are ready.
      const { rows: ahead } = await sql<{ missing: number }>`select count(*)::int as missing from unnest(tribes_key_hours(2)) h
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
