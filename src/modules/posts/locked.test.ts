import crypto from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribedMember } from '../../../test/challenges-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, mintMember, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { asMember, createPost, creatorPost, feedOf, LOCKED_POST_KEYS, patchPost, postPost, readPost, seenBy } from '../../../test/posts-kit.js';
import { createCommunitiesRepo } from '../communities/communities.repo.js';
import { characterCount, CONTENT_HTML_MAX } from './content.js';
import { createEngagementRepo } from './engagement.repo.js';
import { createPostsRepo } from './posts.repo.js';
import { createPostsService } from './posts.service.js';

/**
 * Locked means locked (issue 26, DESIGN §5): a member without access reads only what the
 * creator made public — their own preview, or at most the first third of the text and 140
 * characters — never a short post whole, a media address or a poll; and no post renders to
 * more HTML than a feed can carry.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const TIERS = ['Bronze', 'Silver', 'Gold'] as const;
type TierName = (typeof TIERS)[number];

/** A public community with Bronze < Silver < Gold. */
async function goldCommunity(creator: TestCreator) {
  const { id: communityId } = await createCommunity(t, creator);
  const tiers = {} as Record<TierName, string>;
  for (const [i, name] of TIERS.entries()) tiers[name] = (await createTier(t, creator, communityId, { name, price_cents: 1000 * (i + 1) })).id;
  return { communityId, tiers };
}

const hex = () => crypto.randomUUID().replaceAll('-', '');

describe('what a member without access reads of a post', () => {
  it('gives a Bronze member and a signed-up non-member no text of a Gold post of 40 to 90 characters, only the offer to upgrade', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await goldCommunity(creator);
    const bronze = await subscribedMember(t, creator, { communityId, tierId: tiers.Bronze });
    const stranger = await createMember(t);
    const short = 'Gold only: my deload week, every set and rep.'; // 45 characters
    const longer = 'Gold only: the exact macros I ate every day of the cut, with the shopping list I used.'; // 86
    for (const content of [short, longer]) {
      const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Gold, content });
      for (const member of [bronze, stranger]) {
        const view = await seenBy(t, member, communityId, post.id);
        expect(view).toMatchObject({ locked: true, upgrade_tier_id: tiers.Gold, upgrade_tier_name: 'Gold' });
        const whole = JSON.stringify(view);
        expect(whole).not.toContain('macros I ate every day of the cut');
        expect(whole).not.toContain('every set and rep');
        if (content === short) expect(view.preview).toBeNull();
        // 86 characters: at most 28 of them.
        else expect(view.preview).toBe('Gold only: the exact macros…');
      }
    }
  });

  it('shows at most 140 characters of a long post and its creator sees that same teaser', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await goldCommunity(creator);
    const bronze = await subscribedMember(t, creator, { communityId, tierId: tiers.Bronze });
    const content = `${'Sleep, protein and patience build more muscle than any program. '.repeat(10)}The secret: ${hex()}`;
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Gold, content });
    const { preview } = await seenBy(t, bronze, communityId, post.id);
    expect(characterCount(preview)).toBeLessThanOrEqual(140);
    expect(preview).toMatch(/^Sleep, protein and patience build more muscle than any program\. .*…$/);
    expect((await creatorPost(t, creator, post.id)).preview).toBe(preview);
  });

  it('answers a preview stored under the old rule by the new one on every path, and the start-up pass stores the new one', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await goldCommunity(creator);
    const bronze = await subscribedMember(t, creator, { communityId, tierId: tiers.Bronze });
    const content = 'Gold only: the six exercises I do before every heavy squat session.'; // 67 characters
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Gold, content });
    // The state migration 0019 leaves a post in, with the old whole-post preview still in the column.
    await sql`update posts set preview_auto = ${content}, preview_auto_stale = true where id = ${post.id}`.execute(t.database.db);
    const teaser = 'Gold only: the six…';
    expect((await seenBy(t, bronze, communityId, post.id)).preview).toBe(teaser);
    expect((await creatorPost(t, creator, post.id)).preview).toBe(teaser);

    const db = t.database.db;
    const service = createPostsService({ db, posts: createPostsRepo(db), engagement: createEngagementRepo(db), communities: createCommunitiesRepo(db), now: () => new Date() });
    // On a shared PostgreSQL schema another test file's app may run its start-up pass first: either way the row ends current.
    await service.refreshStalePreviews();
    const row = await db.selectFrom('posts').select(['preview_auto', 'preview_auto_stale']).where('id', '=', post.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ preview_auto: teaser, preview_auto_stale: false });
    expect((await readPost(t, bronze, post.id)).preview).toBe(teaser);
  });

  it('recomputes a stale preview on an edit that leaves the content alone', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await goldCommunity(creator);
    const content = 'Gold only: the six exercises I do before every heavy squat session.';
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Gold, content });
    await sql`update posts set preview_auto = null, preview_auto_stale = true where id = ${post.id}`.execute(t.database.db);
    expect(json(await patchPost(t, creator, post.id, { pinned: true })).data.preview).toBe('Gold only: the six…');
    const row = await t.database.db.selectFrom('posts').select(['preview_auto', 'preview_auto_stale']).where('id', '=', post.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ preview_auto: 'Gold only: the six…', preview_auto_stale: false });
  });
});

/** A random post: words (some bold, some split by paragraphs) ending in a unique word, so that "the whole text" is recognisable anywhere. */
const randomPost = fc.record({
  words: fc.array(fc.tuple(fc.stringMatching(/^[a-z]{1,10}$/), fc.constantFrom(' ', ' ', ' ', '\n\n'), fc.boolean()), { maxLength: 90 }),
  preview: fc.option(fc.stringMatching(/^[A-Z][a-z]{2,10}( [a-z]{1,10}){0,8}$/), { freq: 4 }),
  media: fc.integer({ min: 0, max: 3 }),
  poll: fc.boolean(),
  tier: fc.constantFrom<TierName | null>(null, 'Bronze', 'Silver', 'Gold'),
  reader: fc.constantFrom('stranger', 'former Gold', 'Bronze', 'Silver', 'Gold'),
});

describe('the paywall over random posts, tiers and members, through the API', () => {
  it('never answers a locked post with its whole text, a media URL, a poll or more of its text than the rule allows', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await goldCommunity(creator);
    const readers: Record<string, TestMember & { rank: number }> = {
      stranger: Object.assign(await mintMember(t), { rank: -1 }),
      'former Gold': Object.assign(await subscribedMember(t, creator, { communityId, tierId: tiers.Gold }, { status: 'canceled' }), { rank: -1 }),
    };
    for (const [rank, name] of TIERS.entries()) readers[name] = Object.assign(await subscribedMember(t, creator, { communityId, tierId: tiers[name] }), { rank });

    await fc.assert(
      fc.asyncProperty(randomPost, async (p) => {
        const end = `end${hex()}`;
        const content = `${p.words.map(([w, gap, bold]) => (bold ? `**${w}**` : w) + gap).join('')}${end}`;
        const text = `${p.words.map(([w]) => w).join(' ')}${p.words.length ? ' ' : ''}${end}`;
        const media = Array.from({ length: p.media }, () => ({ type: 'image', url: `https://cdn.example.com/${hex()}.jpg` }));
        const poll = p.poll ? { question: `question${hex()}?`, options: [`option${hex()}`, `option${hex()}`] } : null;
        const post = await createPost(t, creator, { community_id: communityId, content, preview: p.preview, tier_min_id: p.tier && tiers[p.tier], media, poll });
        const reader = readers[p.reader]!;
        const locked = p.tier !== null && reader.rank < TIERS.indexOf(p.tier);
        const secrets = [end, ...media.map((m) => m.url.slice('https://'.length)), ...(poll ? [poll.question.slice(0, -1), ...poll.options] : [])];

        const fromFeed = (await feedOf(t, reader, `?community_id=${communityId}&limit=100`)).data.find((x) => x.id === post.id);
        const fromPage = await readPost(t, reader, post.id);
        for (const view of [fromFeed!, fromPage]) {
          expect(view.locked).toBe(locked);
          if (!locked) {
            expect(view.content).toBe(content);
            continue;
          }
          expect(Object.keys(view).sort()).toEqual(LOCKED_POST_KEYS);
          expect(view).toMatchObject({ media_count: media.length, has_poll: poll !== null });
          const answer = JSON.stringify(view);
          for (const secret of secrets) expect(answer).not.toContain(secret);
          if (p.preview !== null) {
            expect(view.preview).toBe(p.preview);
          } else if (characterCount(text) < 60) {
            expect(view.preview).toBeNull();
          } else {
            const n = characterCount(text);
            expect(characterCount(view.preview)).toBeLessThanOrEqual(Math.min(140, Math.floor(n / 3)));
            expect(view.preview.endsWith('…')).toBe(true);
            expect(text.startsWith(view.preview.slice(0, -1))).toBe(true);
          }
        }
        if (locked) {
          for (const res of [await asMember(t, reader, 'GET', `/posts/${post.id}/comments`), await asMember(t, reader, 'POST', `/posts/${post.id}/poll-votes`, { options: [0] })]) {
            expect(res.statusCode).toBe(403);
            for (const secret of secrets) expect(res.body).not.toContain(secret);
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** Posts of 4,000 characters or less that render to as much HTML as markdown lets them. */
const WORST_CASES: Record<string, string> = {
  'reference links to an address of emoji (percent-encoded)': `[a]: https://e.co/${'😀'.repeat(600)}\n\n${'[a]'.repeat(1126)}`,
  'reference links to a 2,000-character address': `[a]: https://e.co/${'a'.repeat(1980)}\n\n${'[a]'.repeat(666)}`,
  'reference links to a short address': `[a]: https://e.co\n\n${'[a]'.repeat(1326)}`,
  'bare domain names, each linkified': 'a.co '.repeat(800),
  'bare e-mail addresses': 'a@b.co '.repeat(571),
  'towers of 20 nested quotes': '>>>>>>>>>>>>>>>>>>>>\n\n'.repeat(181),
  'empty headings': '#\n'.repeat(2000),
  'nested emphasis': '***a*** '.repeat(500),
};

describe('how much HTML a post may render to', () => {
  it('refuses a post whose HTML would weigh more than 64 KB, on create and on edit, saying why and what to do', async () => {
    const creator = await createCreator(t);
    const { id: communityId } = await createCommunity(t, creator);
    const heavy = WORST_CASES['reference links to a 2,000-character address']!;
    const res = await postPost(t, creator, { community_id: communityId, content: heavy });
    expect(res.statusCode, res.body).toBe(400);
    const { error } = json(res);
    expect(error.code).toBe('validation_error');
    expect(error.details).toEqual([{ field: 'content', message: expect.stringMatching(/^renders to [\d,]+ bytes of HTML, more than the 65,536 \(64 KB\).*Use fewer links or shorter addresses\.$/) }]);

    const post = await createPost(t, creator, { community_id: communityId, content: 'A fine post.' });
    const edit = await patchPost(t, creator, post.id, { content: heavy });
    expect(edit.statusCode, edit.body).toBe(400);
    expect(json(edit).error.details[0].field).toBe('content');
    expect((await creatorPost(t, creator, post.id)).content).toBe('A fine post.');
  });

  it('keeps the HTML of the worst 4,000-character posts within 64 KB: each is refused or answered under the bound', async () => {
    const creator = await createCreator(t);
    const { id: communityId } = await createCommunity(t, creator);
    const outcome: Record<string, string> = {};
    let largest = 0;
    for (const [name, content] of Object.entries(WORST_CASES)) {
      expect(characterCount(content), name).toBeLessThanOrEqual(4000);
      const res = await postPost(t, creator, { community_id: communityId, content });
      if (res.statusCode === 400) {
        outcome[name] = 'refused';
        continue;
      }
      expect(res.statusCode, res.body).toBe(201);
      const bytes = Buffer.byteLength(json(res).data.content_html as string);
      expect(bytes, name).toBeLessThanOrEqual(CONTENT_HTML_MAX);
      largest = Math.max(largest, bytes);
      outcome[name] = 'answered';
    }
    // Measured: emoji addresses rendered to 4.1 MB, 2,000-character ones to 687 KB, quote towers
    // to 98 KB and bare domains to 70 KB; short reference links (56 KB) and e-mails (51 KB) fit.
    expect(outcome).toEqual({
      'reference links to an address of emoji (percent-encoded)': 'refused',
      'reference links to a 2,000-character address': 'refused',
      'reference links to a short address': 'answered',
      'bare domain names, each linkified': 'refused',
      'bare e-mail addresses': 'answered',
      'towers of 20 nested quotes': 'refused',
      'empty headings': 'answered',
      'nested emphasis': 'answered',
    });
    expect(largest).toBeGreaterThan(CONTENT_HTML_MAX / 2);
  });

  it('answers a comment of reference links as the plain text it is: comments are never rendered, so their size is their own', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await goldCommunity(creator);
    const member = await subscribedMember(t, creator, { communityId, tierId: tiers.Gold });
    const post = await createPost(t, creator, { community_id: communityId, content: 'Questions welcome below.' });
    const body = `[a]: https://e.co/${'😀'.repeat(300)}\n\n${'[a]'.repeat(560)}`;
    const made = await asMember(t, member, 'POST', `/posts/${post.id}/comments`, { body });
    expect(made.statusCode, made.body).toBe(201);
    const res = await asMember(t, member, 'GET', `/posts/${post.id}/comments`);
    expect(json(res).data[0].body).toBe(body);
    expect(res.body).not.toContain('<a');
    expect(Buffer.byteLength(res.body)).toBeLessThan(8 * 1024);
  });

  it('renders a post of 35 links to 90-character addresses, as real posts have them, well within the bound', async () => {
    const creator = await createCreator(t);
    const { id: communityId } = await createCommunity(t, creator);
    const content = Array.from({ length: 35 }, (_, i) => `- [Session ${i}](https://example.com/${'p'.repeat(66)}/${i})`).join('\n');
    const post = await createPost(t, creator, { community_id: communityId, content });
    expect(Buffer.byteLength(post.content_html as string)).toBeLessThan(CONTENT_HTML_MAX / 4);
  });
});
