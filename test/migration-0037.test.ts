import crypto from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase, migrationsBefore } from './fresh-database.js';

/** Migration 0037: participants of before it are counted in their score bands, and the band rule is what the rank read assumes. */
const uuid = () => crypto.randomUUID();

describe('migration 0037 (challenge score bands)', () => {
  it('counts every participant of before it in its band: whole numbers below 1,000, three significant digits above', async () => {
    const { handle, drop } = await freshDatabase('m0037');
    try {
      const db = handle.db;
      await migrateToLatest(db, migrationsBefore('0037'));
      const [creatorId, communityId, challengeId] = [uuid(), uuid(), uuid()];
      await sql`insert into creators (id, name, email) values (${creatorId}, 'Old Board', ${`board-${creatorId}@example.com`})`.execute(db);
      await sql`insert into communities (id, creator_id, name, slug, category) values (${communityId}, ${creatorId}, 'Board', ${`board-${creatorId.slice(0, 8)}`}, 'outros')`.execute(db);
      await sql`insert into challenges (id, creator_id, community_id, name, metric, duration_days, starts_at, ends_at, participants_count)
        values (${challengeId}, ${creatorId}, ${communityId}, 'Volume', 'volume_kg', 30, '2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z', 6)`.execute(db);
      const scores = ['0', '0', '999.99', '1000', '1234.5', '1239.99'];
      for (const score of scores) {
        const member = uuid();
        await sql`insert into members (id, name, email) values (${member}, 'Ana Lima', ${`m-${member}@example.com`})`.execute(db);
        await sql`insert into challenge_participants (member_id, challenge_id, creator_id, joined_at, reached_at, score)
          values (${member}, ${challengeId}, ${creatorId}, '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z', ${score})`.execute(db);
      }
      expect(await migrateToLatest(db)).toContain('0037_challenge_score_bands');
      const { rows } = await sql<{ band: string; n: number }>`
        select band::text as band, sum(participants)::int as n from challenge_score_bands b where challenge_id = ${challengeId} group by b.band order by b.band`.execute(db);
      expect(rows.map((r) => [r.band, r.n])).toEqual([['0', 2], ['999', 1], ['1000', 1], ['1230', 2]]);
      const ends = await sql<{ a: string; b: string; c: string }>`select score_band_end(999)::text as a, score_band_end(1230)::text as b, score_band_end(99900)::text as c`.execute(db);
      expect(ends.rows[0]).toEqual({ a: '1000', b: '1240', c: '100000' });
    } finally {
      await handle.close();
      await drop();
    }
  }, 120_000);
});
