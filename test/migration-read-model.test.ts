import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase, migrationsBefore } from './fresh-database.js';

/**
 * Migrations 0035 and 0036 (the member list's read model): directory rows written before them
 * get their member's subscriptions and latest run of logged days. And migrations at scale: a statement longer than the requests'
 * statement timeout still runs, and the connection keeps that timeout afterwards.
 */
const uuid = () => crypto.randomUUID();

describe('migrations 0035 and 0036 (the member list read model)', () => {
  it('fills every existing directory row with its member’s name and subscriptions, one per community, as the list shows them', async () => {
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
      const subscription = (community: string, tier: string, status: string, createdAt: string, member = memberId) =>
        sql`insert into subscriptions (id, creator_id, community_id, tier_id, member_id, status, price_cents, billing_period, processor_subscription_id, created_at, updated_at)
          values (${uuid()}, ${creatorId}, ${community}, ${tier}, ${member}, ${status}, 1000, 'monthly', ${`sub_${uuid()}`}, ${createdAt}, ${createdAt})`.execute(db);
      await subscription(second, pro, 'canceled', '2026-03-01T10:00:00.123456Z');
      await subscription(first, basic, 'active', '2026-04-02T08:30:00Z');
      await sql`insert into creator_members (creator_id, member_id, joined_at, last_joined_at, state, name_key, search)
        select creator_id, member_id, joined_at, last_joined_at, state, name_key, search from creator_membership_source`.execute(db);
      await sql`insert into community_members (creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id)
        select creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id from community_membership_source`.execute(db);

      expect(await migrateToLatest(db)).toContain('0035_directory_subscriptions');
      // A node of the build before 0035 (a rolling deploy) inserts a row without the copies: the trigger fills them.
      const late = uuid();
      await sql`insert into members (id, name, email) values (${late}, 'Bia Tarde', ${`late-${late}@example.com`})`.execute(db);
      await subscription(first, basic, 'trialing', '2026-05-01T00:00:00Z', late);
      await sql`insert into creator_members (creator_id, member_id, joined_at, last_joined_at, state, name_key, search)
        select creator_id, member_id, joined_at, last_joined_at, state, name_key, search from creator_membership_source where member_id = ${late}`.execute(db);
      const copied = await sql<{ name: string; subscriptions: Array<{ status: string }> }>`select name, subscriptions from creator_members where member_id = ${late}`.execute(db);
      expect(copied.rows.map((r) => [r.name, r.subscriptions.map((x) => x.status)])).toEqual([['Bia Tarde', ['trialing']]]);
      const { rows } = await sql<{ name: string; subscriptions: unknown }>`select name, email, subscriptions from creator_members where creator_id = ${creatorId} and member_id = ${memberId}`.execute(db);
      expect(rows.map((r) => r.name)).toEqual(['Ana Lima']);
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

  it('keeps the latest run of logged days of every member who logged before 0036', async () => {
    const { handle, drop } = await freshDatabase('m0036');
    try {
      const db = handle.db;
      await migrateToLatest(db, migrationsBefore('0036'));
      const [creatorId, communityId, a, b, c] = [uuid(), uuid(), uuid(), uuid(), uuid()];
      await sql`insert into creators (id, name, email) values (${creatorId}, 'Old Logs', ${`logs-${creatorId}@example.com`})`.execute(db);
      await sql`insert into communities (id, creator_id, name, slug, category) values (${communityId}, ${creatorId}, 'Logs', ${`logs-${creatorId.slice(0, 8)}`}, 'outros')`.execute(db);
      for (const m of [a, b, c]) {
        await sql`insert into members (id, name, email) values (${m}, 'Ana Lima', ${`m-${m}@example.com`})`.execute(db);
        await sql`insert into member_activity (creator_id, member_id) values (${creatorId}, ${m})`.execute(db);
      }
      // a: Jun 1, then Jun 3–5 (two logs on the 4th); b: one day; c: never logged here, only a personal log.
      const days: Array<[string, string | null]> = [
        [a, '2026-06-01T10:00:00Z'], [a, '2026-06-03T23:59:59Z'], [a, '2026-06-04T00:00:00Z'], [a, '2026-06-04T18:00:00Z'], [a, '2026-06-05T06:00:00Z'],
        [b, '2026-05-20T12:00:00Z'], [c, null],
      ];
      for (const [m, at] of days) {
        await sql`insert into workout_logs (id, member_id, creator_id, community_id, performed_at, sets_count)
          values (${uuid()}, ${m}, ${at ? creatorId : null}, ${at ? communityId : null}, ${at ?? '2026-06-05T06:00:00Z'}, 1)`.execute(db);
      }
      expect(await migrateToLatest(db)).toContain('0036_kept_streak');
      const { rows } = await sql<{ member_id: string; streak_from: string | null; streak_to: string | null }>`
        select member_id, streak_from::text, streak_to::text from member_activity where creator_id = ${creatorId}`.execute(db);
      expect(Object.fromEntries(rows.map((r) => [r.member_id, [r.streak_from, r.streak_to]]))).toEqual({
        [a]: ['2026-06-03', '2026-06-05'],
        [b]: ['2026-05-20', '2026-05-20'],
        [c]: [null, null],
      });
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
