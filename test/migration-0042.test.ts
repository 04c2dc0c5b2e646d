import crypto from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase, migrationsBefore } from './fresh-database.js';

/** Migration 0042: the score bands counted by digits instead of log(numeric), and the bands of scores the old form misplaced counted again. */
const uuid = () => crypto.randomUUID();

describe('migration 0042 (score bands without log)', () => {
  it('bands every score as before below 10^12, bands the largest scores exactly, and counts their challenge again', async () => {
    const { handle, drop } = await freshDatabase('m0042');
    try {
      const db = handle.db;
      await migrateToLatest(db, migrationsBefore('0042'));
      const probes = ['0', '0.5', '999.99', '1000', '1234.5', '9999.99', '10000.01', '99999.99', '123456789.12', '999999999999.99'];
      const before = await bandsOf(db, probes);

      const [creatorId, communityId, big, small] = [uuid(), uuid(), uuid(), uuid()];
      await sql`insert into creators (id, name, email) values (${creatorId}, 'Big Board', ${`board-${creatorId}@example.com`})`.execute(db);
      await sql`insert into communities (id, creator_id, name, slug, category) values (${communityId}, ${creatorId}, 'Board', ${`board-${creatorId.slice(0, 8)}`}, 'outros')`.execute(db);
      for (const id of [big, small]) {
        await sql`insert into challenges (id, creator_id, community_id, name, metric, duration_days, starts_at, ends_at, participants_count)
          values (${id}, ${creatorId}, ${communityId}, 'Volume', 'volume_kg', 30, '2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z', 2)`.execute(db);
      }
      const join = async (challengeId: string, score: string) => {
        const member = uuid();
        await sql`insert into members (id, name, email) values (${member}, 'Ana Lima', ${`m-${member}@example.com`})`.execute(db);
        await sql`insert into challenge_participants (member_id, challenge_id, creator_id, joined_at, reached_at, score)
          values (${member}, ${challengeId}, ${creatorId}, '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z', ${score})`.execute(db);
      };
      await join(big, '9999999999999.99');
      await join(big, '1500');
      await join(small, '1234.5');
      await join(small, '1239.99');
      // The old rule's 16 digits of log() round 9,999,999,999,999.99 up to 10^13.
      expect(await storedBands(db, big)).toEqual([['1500', 1], ['9900000000000', 1]]);

      expect(await migrateToLatest(db)).toContain('0042_score_band_digits');
      expect(await bandsOf(db, probes)).toEqual(before);
      expect(await bandsOf(db, ['9999999999999.99', '99999999999999.99'])).toEqual([
        ['9990000000000', '10000000000000'],
        ['99900000000000', '100000000000000'],
      ]);
      expect(await storedBands(db, big)).toEqual([['1500', 1], ['9990000000000', 1]]);
      expect(await storedBands(db, small)).toEqual([['1230', 2]]);
    } finally {
      await handle.close();
      await drop();
    }
  }, 120_000);
});

type Db = Parameters<typeof migrateToLatest>[0];

/** [band, band end] of each score, as the database's functions give them. */
async function bandsOf(db: Db, scores: string[]) {
  const { rows } = await sql<{ band: string; band_end: string }>`
    select score_band(s)::text as band, score_band_end(score_band(s))::text as band_end
    from unnest(${scores}::numeric[]) with ordinality as x(s, n) order by n`.execute(db);
  return rows.map((r) => [r.band, r.band_end]);
}

async function storedBands(db: Db, challengeId: string) {
  const { rows } = await sql<{ band: string; n: number }>`
    select band::text as band, sum(participants)::int as n from challenge_score_bands where challenge_id = ${challengeId} group by band order by band`.execute(db);
  return rows.map((r) => [r.band, r.n]);
}
