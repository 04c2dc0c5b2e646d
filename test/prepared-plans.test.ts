import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase } from './fresh-database.js';
import { buildTestApp, createCreator, type TestApp, type TestCreator } from './helpers.js';
import { addMembersInBulk, placeIn } from './members-kit.js';
import { createPost, crowd, feedOf, readPost } from './posts-kit.js';

/**
 * A prepared statement saves PostgreSQL its planning only once it settles on the generic plan
 * (db/prepared.ts pageWindow). With a page's LIMIT and OFFSET as parameters the generic plan is
 * costed for a tenth of the creator's rows, never wins, and every execution is planned again at
 * bind. This needs a creator whose size the statistics show, so it runs on a database of its
 * own: one app on one connection (the statements asked about are the ones it prepared), one
 * creator with 20,000 members. PostgreSQL only (the embedded database prepares nothing).
 */
const postgresUrl = inject('postgresUrl');

describe.runIf(postgresUrl)('prepared page statements on PostgreSQL', () => {
  let t: TestApp;
  let drop: () => Promise<void>;
  let creator: TestCreator;

  beforeAll(async () => {
    const fresh = await freshDatabase('plans', 1);
    drop = fresh.drop;
    await migrateToLatest(fresh.handle.db);
    t = await buildTestApp({ database: fresh.handle });
    creator = await createCreator(t);
    const place = await placeIn(t, creator);
    await addMembersInBulk(t, creator, place, 20_000, { joinedAt: new Date() });
    await sql`analyze`.execute(t.database.db);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await drop?.();
  });

  async function plansOf(path: string, pattern: string) {
    for (let i = 0; i < 10; i++) {
      const res = await t.app.inject({ method: 'GET', url: path, headers: creator.headers });
      expect(res.statusCode, res.body).toBe(200);
    }
    const { rows } = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
      select statement, generic_plans::int, custom_plans::int from pg_prepared_statements where name like ${pattern}`.execute(t.database.db);
    return rows;
  }

  it('plans the member list once per connection: a first page whole, a deeper page and a search for their rows', async () => {
    const first = await plansOf('/api/v1/members?limit=20', 'directory_rows%');
    expect(first).toHaveLength(1);
    // The first five executions are planned for their values, then the generic plan is kept.
    expect(first[0]).toMatchObject({ custom_plans: 5, generic_plans: 5 });
    // A deeper page and a search pick their ids in a statement planned each time (not prepared), then read the rows by a second one.
    const rowsByIds = (await plansOf('/api/v1/members?limit=20&page=2', 'directory_rows%')).find((r) => r.statement !== first[0]!.statement);
    expect(rowsByIds).toMatchObject({ custom_plans: 5, generic_plans: 5 });
    const searched = (await plansOf('/api/v1/members?q=bulk', 'directory_rows%')).filter((r) => r.statement !== first[0]!.statement && r.statement !== rowsByIds!.statement);
    expect(searched).toEqual([expect.objectContaining({ custom_plans: 5, generic_plans: 5 })]);
  });

  it('plans the first page of the subscriptions list once per connection, and a deeper page on every request', async () => {
    const first = await plansOf('/api/v1/subscriptions?limit=20', 'subscriptions_list_all%');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ custom_plans: 5, generic_plans: 5 });
    const deeper = (await plansOf('/api/v1/subscriptions?limit=20&page=2', 'subscriptions_list_all%')).find((r) => r.statement !== first[0]!.statement);
    expect(deeper).toMatchObject({ custom_plans: 10, generic_plans: 0 });
  });

  it('plans the member token lookup, the feed\'s first page and a batch of opened posts with their views once per connection, though they take lists', async () => {
    const place = await placeIn(t, creator, 'Reader');
    await createPost(t, creator, { community_id: place.communityId, content: 'The newest post' });
    const [member, other] = await crowd(t, creator, place, 2);
    // Sizes the statistics show: a token per member, 5,000 older posts, 1,000 other communities.
    const db = t.database.db;
    await sql`insert into member_tokens (id, member_id, token_hash, expires_at)
      select gen_random_uuid(), m.id, sha256(m.id::text::bytea), now() + interval '1 day' from members m where m.id <> ${member!.id}`.execute(db);
    await sql`insert into posts (id, creator_id, community_id, content, content_html, preview_auto_stale, created_at, updated_at)
      select gen_random_uuid(), ${creator.id}, ${place.communityId}, 'Older', '<p>Older</p>', false, now() - n * interval '1 minute', now() - n * interval '1 minute'
      from generate_series(1, 5000) n`.execute(db);
    await sql`insert into post_counts (post_id) select p.id from posts p where not exists (select 1 from post_counts c where c.post_id = p.id)`.execute(db);
    await sql`insert into communities (id, creator_id, name, slug, category)
      select gen_random_uuid(), ${creator.id}, 'Other ' || n, 'other-' || n, 'outros' from generate_series(1, 1000) n`.execute(db);
    await sql`analyze`.execute(db);
    let newest = '';
    for (let i = 0; i < 10; i++) {
      const page = await feedOf(t, member!, `?community_id=${place.communityId}&limit=50`);
      expect(page.data.map((p) => p.content).slice(0, 2)).toEqual(['The newest post', 'Older']);
      newest = page.data[0]!.id as string;
    }
    // A post opened ten times by two members at once: each time one batch of their two tokens,
    // one of their two reads with their views (member_opened).
    for (let i = 0; i < 10; i++) {
      const both = await Promise.all([readPost(t, member!, newest), readPost(t, other!, newest)]);
      expect(both.map((p) => p.content)).toEqual(['The newest post', 'The newest post']);
    }
    const { rows } = await sql<{ name: string; generic_plans: number; custom_plans: number }>`
      select name, generic_plans::int, custom_plans::int from pg_prepared_statements
      where name similar to '(member_tokens_active|feed_access|member_feed|member_opened)%' order by name`.execute(t.database.db);
    // Given the list itself, each execution's plan knew its length and was costed below the
    // generic one, so all of them were planned at bind (db/prepared.ts opaqueArray).
    expect(rows.map((r) => r.name.replace(/_[0-9a-f]{12}$/, ''))).toEqual(['feed_access', 'member_feed', 'member_opened', 'member_tokens_active']);
    const executions = { feed_access: 10, member_feed: 10, member_opened: 10, member_tokens_active: 20 };
    for (const r of rows) {
      const n = executions[r.name.replace(/_[0-9a-f]{12}$/, '') as keyof typeof executions];
      expect(r, r.name).toMatchObject({ custom_plans: 5, generic_plans: n - 5 });
    }
  });
});
