import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase, migrationsBefore } from './fresh-database.js';

/**
 * Migration 0035 (the member list's read model): directory rows written before it get their
 * member's subscriptions. And migrations at scale: a statement longer than the requests'
 * statement timeout still runs, and the connection keeps that timeout afterwards.
 */
const uuid = () => crypto.randomUUID();

describe('migration 0035 (subscriptions in the directory row)', () => {
  it('fills every existing directory row with its subscriptions, one per community, as the list shows them', async () => {
    const { handle, drop } = await freshDatabase('m0035');
    try {
      const db = handle.db;
      await migrateToLatest(db, migrationsBefore('0035'));
      const [creatorId, memberId, first, second, basic, pro] = [uuid(), uuid(), uuid(), uuid(), uuid(), uuid()];
      await sql`insert into creators (id, name, email) values (${creatorId}, 'Old Rows', ${`old-${creatorId}@example.com`})`.execute(db);
      await sql`insert into members (id, name, email) values (${memberId}, 'Ana Lima', ${`ana-${memberId}@example.com`})`.execute(db);
      for (const [community, tier, slug] of [[first, basic, 'first'], [second, pro, 'second']] as const) {
        await sql`insert into communities (id, creator_id, name, slug, category) values (${community}, ${creatorId}, ${slug}, ${`${slug}-${creatorId.slice(0, 8)}`}, 'outros')`.execute(db);
        await sql`insert into tiers (id, creator_id, community_id, name, price_cents, currency, billing_period) values (${tier}, ${creatorId}, ${community}, ${slug}, 1000, 'brl', 'monthly')`.execute(db);
      }
      const subscription = (community: string, tier: string, status: string, createdAt: string) =>
        sql`insert into subscriptions (id, creator_id, community_id, tier_id, member_id, status, price_cents, billing_period, processor_subscription_id, created_at, updated_at)
          values (${uuid()}, ${creatorId}, ${community}, ${tier}, ${memberId}, ${status}, 1000, 'monthly', ${`sub_${uuid()}`}, ${createdAt}, ${createdAt})`.execute(db);
      await subscription(second, pro, 'canceled', '2026-03-01T10:00:00.123456Z');
      await subscription(first, basic, 'active', '2026-04-02T08:30:00Z');
      await sql`insert into creator_members (creator_id, member_id, joined_at, last_joined_at, state, name_key, search)
        select creator_id, member_id, joined_at, last_joined_at, state, name_key, search from creator_membership_source`.execute(db);
      await sql`insert into community_members (creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id)
        select creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id from community_membership_source`.execute(db);

      expect(await migrateToLatest(db)).toContain('0035_directory_subscriptions');
      const { rows } = await sql<{ subscriptions: unknown }>`select subscriptions from creator_members where creator_id = ${creatorId}`.execute(db);
      expect(rows.map((r) => r.subscriptions)).toEqual([
        [
          { community_id: second, tier_id: pro, status: 'canceled', joined_at: '2026-03-01T10:00:00.123Z' },
          { community_id: first, tier_id: basic, status: 'active', joined_at: '2026-04-02T08:30:00.000Z' },
        ],
      ]);
    } finally {
      await handle.close();
      await drop();
    }
  }, 120_000);

  it.skipIf(!inject('postgresUrl'))('runs a migration statement longer than the statement timeout, and requests keep their timeout afterwards', async () => {
    const { handle, drop } = await freshDatabase('mslow', 1, 400);
    const dir = migrationsBefore('9999');
    fs.writeFileSync(path.join(dir, '9999_slow.sql'), 'select pg_sleep(0.8);\n');
    try {
      expect(await migrateToLatest(handle.db, dir)).toContain('9999_slow');
      // The pool's one connection, the migration's, is back to the requests' timeout.
      await expect(sql`select pg_sleep(0.8)`.execute(handle.db)).rejects.toThrow(/statement timeout/);
    } finally {
      await handle.close();
      await drop();
    }
  }, 120_000);
});
