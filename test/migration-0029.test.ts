import crypto from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Db } from '../src/db/client.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase, migrationsBefore } from './fresh-database.js';

/**
 * Migration 0029 (docs/sharding.md): post_counts and challenge_day_ranks get their creator_id.
 * A database of its own (a fresh schema on PostgreSQL, a fresh embedded one), migrated up to
 * 0028, filled, then migrated again.
 */
const uuid = () => crypto.randomUUID();

/** A post with its counters and a challenge with a rank, written as the code before 0029 wrote them. */
async function oldRows(db: Db, creatorId: string) {
  const communityId = uuid();
  const postId = uuid();
  const challengeId = uuid();
  await sql`insert into creators (id, name, email) values (${creatorId}, 'Shard Creator', ${`shard-${creatorId}@example.com`})`.execute(db);
  await sql`insert into communities (id, creator_id, name, slug, category) values (${communityId}, ${creatorId}, 'Shard', ${`shard-${creatorId.slice(0, 8)}`}, 'outros')`.execute(db);
  await sql`insert into posts (id, creator_id, community_id, content, content_html, created_at, updated_at)
    values (${postId}, ${creatorId}, ${communityId}, 'hello', '<p>hello</p>', now(), now())`.execute(db);
  await sql`insert into post_counts (post_id) values (${postId})`.execute(db);
  await sql`insert into challenges (id, creator_id, community_id, name, metric, duration_days, starts_at, ends_at)
    values (${challengeId}, ${creatorId}, ${communityId}, 'Shard', 'workouts_count', 7, '2026-01-01T00:00:00Z', '2026-01-08T00:00:00Z')`.execute(db);
  await sql`insert into challenge_day_ranks (challenge_id, member_id, day, rank) values (${challengeId}, ${uuid()}, '2026-01-02', 1)`.execute(db);
  return { postId, challengeId };
}

async function creatorsOf(db: Db, postId: string, challengeId: string) {
  const post = await sql<{ creator_id: string }>`select creator_id from post_counts where post_id = ${postId}`.execute(db);
  const ranks = await sql<{ creator_id: string }>`select creator_id from challenge_day_ranks where challenge_id = ${challengeId}`.execute(db);
  return { post: post.rows[0]?.creator_id, ranks: ranks.rows.map((r) => r.creator_id) };
}

describe('migration 0029 (shard readiness)', () => {
  it('copies each post counter’s and day rank’s creator_id from its parent, and fills it when an older node leaves it out', async () => {
    const { handle, drop } = await freshDatabase('m0029');
    try {
      const db = handle.db;
      await migrateToLatest(db, migrationsBefore('0029'));
      const creatorId = uuid();
      const before = await oldRows(db, creatorId);
      expect(await migrateToLatest(db)).toContain('0029_shard_ready');
      expect(await creatorsOf(db, before.postId, before.challengeId)).toEqual({ post: creatorId, ranks: [creatorId] });

      // A node still running the code before 0029 (a rolling deploy) writes no creator_id: the trigger does.
      const otherCreator = uuid();
      const late = await oldRows(db, otherCreator);
      expect(await creatorsOf(db, late.postId, late.challengeId)).toEqual({ post: otherCreator, ranks: [otherCreator] });
    } finally {
      await handle.close();
      await drop();
    }
    // Two full migrations of a fresh embedded database: seconds each, more beside other files.
  }, 120_000);
});
