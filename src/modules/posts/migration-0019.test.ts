import crypto from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../db/client.js';
import { migrateToLatest } from '../../db/migrate.js';
import { freshDatabase, migrationsBefore } from '../../../test/fresh-database.js';
import { createCommunitiesRepo } from '../communities/communities.repo.js';
import { CONTENT_HTML_MAX, MEDIA_URL_MAX, previewOf } from './content.js';
import { createEngagementRepo } from './engagement.repo.js';
import { createPostsRepo } from './posts.repo.js';
import { createPostsService } from './posts.service.js';

/**
 * Migration 0019 on a database holding posts as the code before it stored them: previews of
 * up to 140 characters of any post, HTML of any weight, media URLs of any length. A database
 * of its own (a fresh schema on PostgreSQL, a fresh embedded one), migrated up to 0019, then
 * filled, then migrated again.
 */

const uuid = () => crypto.randomUUID();

/** A database migrated up to 0018, with a creator and a community as they were stored then. */
async function oldCommunity(db: Db) {
  await migrateToLatest(db, migrationsBefore('0019'));
  const creatorId = uuid();
  const communityId = uuid();
  await sql`insert into creators (id, name, email) values (${creatorId}, 'Old Creator', ${`old-${creatorId}@example.com`})`.execute(db);
  await sql`insert into communities (id, creator_id, name, slug, category) values (${communityId}, ${creatorId}, 'Old', ${`old-${creatorId.slice(0, 8)}`}, 'outros')`.execute(db);
  return { creatorId, communityId };
}

describe('migration 0019 on posts stored before it', () => {
  it('clears every stored automatic preview so none is served again, and the start-up pass recomputes each once, by the current rule', async () => {
    const { handle, drop } = await freshDatabase('m0019', 3);
    const db = handle.db;
    try {
      const { creatorId, communityId } = await oldCommunity(db);

      const posts = {
        // 58 characters: stored whole as its preview before, no preview now.
        short: 'Gold only: my deload week, every set and rep, day by day.',
        // 120 characters: stored whole before, a third now.
        medium: 'Gold only: the macros I ate each day of the cut, with the shopping list and the three recipes I made on repeat all week.',
        long: `${'Recovery matters as much as training, so sleep well. '.repeat(40)}\n\n<script>alert("x")</script>`,
        // A custom preview is the creator's choice: it stays as written.
        custom: 'A post with a preview of its own, written by its creator for members without access.',
      };
      const ids: Record<string, string> = {};
      for (const [name, content] of Object.entries(posts)) {
        ids[name] = uuid();
        await sql`insert into posts (id, creator_id, community_id, content, content_html, preview, preview_auto, created_at, updated_at)
          values (${ids[name]}, ${creatorId}, ${communityId}, ${content}, ${`<p>${content}</p>`}, ${name === 'custom' ? 'My own words' : null},
                  ${content.slice(0, 140)}, now(), now())`.execute(db);
        await sql`insert into post_counts (post_id) values (${ids[name]})`.execute(db);
      }

      await migrateToLatest(db);

      const rows = async () =>
        Object.fromEntries(
          (await sql<{ id: string; preview_auto: string | null; preview_auto_stale: boolean }>`
            select id, preview_auto, preview_auto_stale from posts where creator_id = ${creatorId}`.execute(db)).rows.map((r) => [r.id, r]),
        );
      const migrated = await rows();
      for (const id of Object.values(ids)) expect(migrated[id]).toMatchObject({ preview_auto: null, preview_auto_stale: true });

      // Every read goes through the paywall's teaser: before the pass, it is computed from the content.
      const service = createPostsService({ db, posts: createPostsRepo(db), engagement: createEngagementRepo(db), communities: createCommunitiesRepo(db), now: () => new Date() });
      const teasers = async () => Object.fromEntries(await Promise.all(Object.entries(ids).map(async ([name, id]) => [name, (await service.get(creatorId, id)).preview])));
      const expected = { short: null, medium: previewOf(posts.medium), long: previewOf(posts.long), custom: 'My own words' };
      expect(expected.medium).toBe('Gold only: the macros I ate each day of…');
      expect(await teasers()).toEqual(expected);

      // Two nodes starting together share the work and do each post once.
      const [a, b] = await Promise.all([service.refreshStalePreviews(), service.refreshStalePreviews()]);
      expect(a + b).toBe(4);
      expect(await service.refreshStalePreviews()).toBe(0);
      const refreshed = await rows();
      for (const [name, id] of Object.entries(ids)) expect(refreshed[id], name).toMatchObject({ preview_auto: previewOf(posts[name as keyof typeof posts]), preview_auto_stale: false });
      expect(await teasers()).toEqual(expected);

      // A server still running the code before 0019 (a rolling deploy) writes an old-rule
      // preview and no flag: its post counts as stale, and is answered by the new rule.
      const late = uuid();
      await sql`insert into posts (id, creator_id, community_id, content, content_html, preview_auto, created_at, updated_at)
        values (${late}, ${creatorId}, ${communityId}, ${posts.medium}, ${`<p>${posts.medium}</p>`}, ${posts.medium}, now(), now())`.execute(db);
      await sql`insert into post_counts (post_id) values (${late})`.execute(db);
      expect((await rows())[late]).toMatchObject({ preview_auto_stale: true });
      expect((await service.get(creatorId, late)).preview).toBe(expected.medium);
    } finally {
      await handle.close();
      await drop();
    }
  });

  it('shows HTML stored over the bound as escaped plain text and drops media URLs the API cannot answer, keeping the rest in order', async () => {
    const { handle, drop } = await freshDatabase('m0019', 3);
    const db = handle.db;
    try {
      const { creatorId, communityId } = await oldCommunity(db);
      const heavyContent = `Read <this> & "that"\n[a]: https://example.com/${'😀'.repeat(300)}\n\n${'[a]'.repeat(1000)}`;
      const fitting = '<p>Already <strong>fine</strong></p>';
      const tooLong = `https://cdn.example.com/${'b'.repeat(MEDIA_URL_MAX)}`;
      const atBound = `https://cdn.example.com/${'c'.repeat(MEDIA_URL_MAX - 'https://cdn.example.com/'.length)}`;
      const media = [
        { type: 'image', url: 'https://cdn.example.com/first.jpg' },
        { type: 'video', url: tooLong },
        { type: 'image', url: atBound },
        { type: 'image', url: 'http://cdn.example.com/plain.jpg' },
        { type: 'audio', url: 'https://cdn.example.com/last.mp3' },
      ];
      const heavyId = uuid();
      const fineId = uuid();
      await sql`insert into posts (id, creator_id, community_id, content, content_html, preview_auto, media, created_at, updated_at) values
        (${heavyId}, ${creatorId}, ${communityId}, ${heavyContent}, ${'<p>' + '<a href="x">a</a>'.repeat(100_000) + '</p>'}, 'old', ${JSON.stringify(media)}::jsonb, now(), now()),
        (${fineId}, ${creatorId}, ${communityId}, 'Already **fine**', ${fitting}, 'old', ${JSON.stringify(media.slice(0, 1))}::jsonb, now(), now())`.execute(db);

      await migrateToLatest(db);

      const { rows } = await sql<{ id: string; content_html: string; media: Array<{ type: string; url: string }> }>`select id, content_html, media from posts where creator_id = ${creatorId}`.execute(db);
      const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
      const html = byId[heavyId]!.content_html;
      expect(Buffer.byteLength(html)).toBeLessThanOrEqual(CONTENT_HTML_MAX);
      expect(html.startsWith('<p>Read &lt;this&gt; &amp; &quot;that&quot;<br>\n[a]: https://example.com/😀')).toBe(true);
      expect(html).not.toMatch(/<(?!\/?p>|br>)/);
      expect(byId[fineId]!.content_html).toBe(fitting);
      expect(byId[heavyId]!.media.map((m) => m.url)).toEqual(['https://cdn.example.com/first.jpg', atBound, 'https://cdn.example.com/last.mp3']);
      expect(byId[fineId]!.media).toEqual(media.slice(0, 1));
    } finally {
      await handle.close();
      await drop();
    }
  });
});
