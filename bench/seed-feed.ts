/**
 * Seeds a community feed at scale on top of bench/seed-members.ts, straight through SQL:
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/tribes npx tsx bench/seed-feed.ts
 *   ... --members 20000 --posts 100000 --engagement 2000000 --comments 100000 --tokens 2000   # the defaults (comments: engagement / 20)
 *
 * In the creator's first community (where most seeded members subscribe): `posts` posts over
 * the last two years, 3 of them pinned, half public and the rest split evenly over the
 * community's tiers; light markdown of 100–1,500 characters (a pool of 200 texts rendered
 * once by the production renderMarkdown/previewOf, reused by modulo), a quarter with media,
 * 5% with a poll, 0.5% deleted. `engagement` rows, 40% kudos and 60% views (one per member,
 * post and UTC day), spread over the posts by a power law on their age (the last month gets
 * about 60%); a post's kudos come from members who viewed it. `comments` comments the same
 * way, and poll votes from 40% of a poll's viewers. post_counts and communities.posts_count
 * are exactly the counts of those rows. Then `tokens` member tokens: 3/4 for members live at
 * the community's top tier (they read every post in full), 1/4 live at its lowest (they meet
 * locked posts). Progress goes to stderr; the last line of stdout is the fixture as JSON.
 *
 * Set-based throughout (generate_series, one statement per table): 100k posts and 2M
 * engagement rows take minutes, not hours.
 */
import { pathToFileURL } from 'node:url';
import { sql, type RawBuilder } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { generateMemberToken } from '../src/modules/members/member-auth.js';
import { previewOf, renderMarkdown } from '../src/modules/posts/content.js';
import { LIVE_STATUSES } from '../src/modules/programs/access.js';
import { seedMembers, type MembersFixture } from './seed-members.js';
import { phaseTimer } from './progress.js';

/** Counts to seed; `engagement` is kudos plus views. */
export interface FeedOptions {
  members: number;
  posts: number;
  engagement: number;
  comments: number;
  tokens: number;
}

export interface FeedFixture {
  members: number;
  main: MembersFixture;
  community_id: string;
  /** Posts seeded, and those not deleted (the feed's total). */
  posts: number;
  posts_count: number;
  pinned_post_ids: string[];
  /** The 1,000 newest posts not deleted nor pinned, newest first: what members open from the top of the feed. */
  recent_post_ids: string[];
  /** 200 older posts not deleted, in random order. */
  older_post_ids: string[];
  /** The newest post at the top tier: locked for `locked_tokens`. */
  locked_post_id: string | null;
  /** Members live at the top tier, and at the lowest. */
  full_tokens: string[];
  locked_tokens: string[];
  rows: { kudos: number; views: number; comments: number; poll_votes: number };
  seed_s: { members: number; feed: number };
}

const SPAN_DAYS = 730;
const CONTENT_POOL = 200;
// Age exponent of the engagement power law: weight (age in days + 2)^-1.2 puts ~60% of it in the last 30 days.
const AGE_EXPONENT = 1.2;

/** A UUIDv7 of the timestamp SQL expression `at` (ms in the time field, random bits after), as newId() makes at that moment. */
const uuid7 = (at: string) =>
  sql.raw(`(lpad(to_hex(floor(extract(epoch from ${at}) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || (array['8','9','a','b'])[1 + floor(random() * 4)::int] || substr(md5(random()::text), 1, 15))::uuid`);

const log = (msg: string) => process.stderr.write(`[seed:feed] ${msg}\n`);

// What a fitness creator writes (Portuguese, accents and emoji included: the renderer and preview see real text).
const SENTENCES = [
  'Bom dia, tribo! Hoje o treino é de pernas e quero ver todo mundo registrando as séries no app 💪', 'Lembrem: a progressão de carga vem depois da técnica, nunca antes.',
  'Quem dormiu menos de seis horas ontem, reduza o volume em 20% e foque na execução.', 'O agachamento búlgaro é o exercício que mais odeiam e o que mais resultado dá.',
  'Hidratação conta: pelo menos 35 ml por quilo de peso corporal, mais nos dias quentes.', 'Semana de deload: mesmos exercícios, metade das séries, e nada de falha.',
  'Recebi muitas perguntas sobre creatina, então vamos lá: 3 a 5 g por dia, todo dia, sem ciclo.', 'O descanso entre séries pesadas pode e deve passar de dois minutos. Não tenham pressa.',
  'Parabéns a quem completou o desafio de 30 dias! A lista de vencedores sai amanhã 🔥', 'Alongamento antes do treino: dinâmico. Depois: estático, se você gostar.',
  'Quem treina em casa pode trocar a barra por mochila com livros, funciona muito bem.', 'Cardio em jejum não queima mais gordura no fim do dia; faça quando for melhor para você.',
  'A live de quinta fica gravada aqui no feed para quem não conseguir assistir ao vivo.', 'Dor muscular tardia não é sinal de treino bom, é só sinal de estímulo novo.',
  'Proteína distribuída em quatro refeições rende mais do que tudo no jantar.', 'Hoje faz dois anos que esta comunidade começou. Obrigado por cada treino registrado! ❤️',
];
const ITEMS = ['4 × 8 agachamento livre', '3 × 12 leg press 45°', '3 × 10 stiff com halteres', '3 × 15 cadeira extensora', '4 × 20 panturrilha em pé', '10 min de bike leve', 'prancha 3 × 45 s', 'remada curvada 4 × 10', 'supino inclinado 4 × 8', 'elevação lateral 3 × 15'];
const TITLES = ['Treino do dia', 'Dica rápida', 'Resultados da semana', 'Aviso importante', 'Perguntas e respostas', 'Plano para as próximas semanas'];
// Poll questions and their options ('|'-separated), by the same index.
const POLLS = ['Qual treino vocês preferem amanhã?', 'Que horário é melhor para a live?', 'Qual desafio fazemos no mês que vem?', 'Quantos dias por semana você treina?', 'Vamos ter encontro presencial?'];
const POLL_OPTIONS = ['Pernas|Costas|Peito e ombros', 'Manhã|Almoço|Noite', 'Corrida 5 km|Flexões|Agachamentos|Prancha', '2|3|4|5|6 ou mais', 'Sim|Não'];
const COMMENTS = ['Bora! 💪', 'Que treino incrível, obrigada!', 'Fiz hoje e minhas pernas acabaram 😂', 'Dá para fazer com halteres em casa?', 'Melhor dica da semana.', 'Registrado no app ✅', 'Quantas séries no total?', 'Vou tentar amanhã cedo.', 'Amei o formato da live!', 'Top demais, valeu!'];

/** A deterministic random stream (mulberry32): every seed renders the same pool. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` posts of 100–1,500 characters, most of them short, with the markdown a creator uses. */
function contentPool(n: number): string[] {
  const r = random(14);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const sentence = () => (r() < 0.2 ? pick(SENTENCES).replace(/^(\S+ \S+)/, '**$1**') : pick(SENTENCES));
  const paragraph = () => Array.from({ length: 1 + Math.floor(r() * 3) }, sentence).join(r() < 0.3 ? '\n' : ' ');
  const blocks = [
    paragraph,
    paragraph,
    () => `## ${pick(TITLES)}`,
    () => Array.from({ length: 3 + Math.floor(r() * 4) }, (_, i) => (r() < 0.5 ? `${i + 1}. ${pick(ITEMS)}` : `- ${pick(ITEMS)}`)).join('\n'),
    () => `> ${pick(SENTENCES)}`,
    () => (r() < 0.5 ? `Mais detalhes no [guia completo](https://example.com/guias/${Math.floor(r() * 1000)}).` : `Link da live: https://example.com/live/${Math.floor(r() * 1000)}`),
    () => `*${pick(SENTENCES)}*`,
  ];
  return Array.from({ length: n }, () => {
    const target = 100 + Math.floor(1400 * r() ** 1.6);
    let text = paragraph();
    while (text.length < target) {
      const next = `${text}\n\n${pick(blocks)()}`;
      if (next.length > 1500) break;
      text = next;
    }
    return text;
  });
}

export async function seedFeed(url: string, opts: FeedOptions): Promise<FeedFixture> {
  const P = Math.floor(opts.posts);
  if (!Number.isInteger(P) || P < 1) throw new Error(`posts must be a positive integer, got ${opts.posts}`);
  const membersStarted = Date.now();
  const main = await seedMembers(url, { members: opts.members });
  const { db, close } = connectPostgres({ url, poolMax: 1, statementTimeoutMs: 3_600_000 });
  const { started, phase } = phaseTimer(log);
  try {
    const creatorId = main.creator_id;
    const communityId = main.community_ids[0]!;
    const now = new Date();
    // The community's tiers from lowest to top in its tier order (the seed gives them levels).
    const tierIds = (await sql<{ id: string }>`select id from tiers where community_id = ${communityId} order by level, price_cents, created_at`.execute(db)).rows.map((t) => t.id);
    const contents = contentPool(CONTENT_POOL);
    // Pinned: the welcome post of two years ago, one from last year and one from two weeks ago.
    const pinned = [...new Set([Math.ceil(P * 0.02), Math.floor(P * 0.6), P - Math.floor(P / 50)].map((i) => Math.min(P, Math.max(1, i))))];
    const rows = { kudos: 0, views: 0, comments: 0, poll_votes: 0 };

    // One connection: temporary tables and session settings.
    await db.connection().execute(async (conn) => {
      await sql`set synchronous_commit = off`.execute(conn);
      await sql`set work_mem = '256MB'`.execute(conn);
      await sql`set maintenance_work_mem = '512MB'`.execute(conn);
      // A view's day is its UTC day, as the view recorder writes it.
      await sql`set timezone = 'UTC'`.execute(conn);

      await sql`create temporary table seed_content on commit preserve rows as
        select * from unnest(${contents.map((_, k) => k)}::int[], ${contents}::text[], ${contents.map(renderMarkdown)}::text[], ${contents.map((c) => previewOf(c))}::text[])
          as c(k, content, html, preview)`.execute(conn);
      phase(`rendered ${contents.length} distinct contents`);

      // In time order, so ids (UUIDv7 of created_at) and heap order follow it as in production.
      const inserted = await sql`insert into posts (id, creator_id, community_id, content, content_html, preview, preview_auto, preview_auto_stale, tier_min_id, media, pinned,
          poll_question, poll_options, poll_multiple, poll_closes_at, created_at, updated_at, deleted_at)
        select ${uuid7('g.at')}, ${creatorId}, ${communityId}, c.content, c.html,
               case when g.tier is not null and g.rv < 0.2 then 'Só para assinantes: ' || c.preview end, c.preview, false, g.tier,
               case when g.rm < 0.25 then (select jsonb_agg(jsonb_build_object('type', case when m = 1 and g.rm < 0.04 then 'video' else 'image' end,
                                                                               'url', 'https://cdn.example.com/tribes/' || g.i || '/' || m || case when m = 1 and g.rm < 0.04 then '.mp4' else '.jpg' end) order by m)
                                           from generate_series(1, 1 + g.i % 4) m)
                    else '[]'::jsonb end,
               g.i = any(${pinned}::int[]),
               case when g.poll then (${POLLS}::text[])[1 + g.i % ${POLLS.length}] end,
               case when g.poll then string_to_array((${POLL_OPTIONS}::text[])[1 + g.i % ${POLLS.length}], '|') end,
               case when g.poll then g.rd > 0.8 end,
               case when g.poll and g.i % 2 = 0 then g.at + interval '7 days' end,
               g.at, least(${now}::timestamptz, g.at + case when g.rv > 0.9 then random() * interval '2 days' else interval '0' end),
               case when g.rd < 0.005 and not g.i = any(${pinned}::int[]) then least(${now}::timestamptz, g.at + random() * interval '30 days') end
        from (select i, ${now}::timestamptz - (${P}::int - i + random()) * ${(SPAN_DAYS * 86400) / P}::float8 * interval '1 second' as at,
                     case when random() >= 0.5 then (${tierIds}::uuid[])[1 + floor(random() * ${tierIds.length}::int)::int] end as tier,
                     random() < 0.05 as poll, random() as rm, random() as rv, random() as rd
              from generate_series(1, ${P}::int) i) g
        join seed_content c on c.k = g.i % ${CONTENT_POOL}
        order by g.i`.execute(conn);
      phase(`inserted ${inserted.numAffectedRows ?? 0} posts`);

      // Who engages: everyone who ever subscribed to the community, in random order.
      await sql`create temporary table seed_readers on commit preserve rows as
        select (row_number() over (order by random()) - 1)::int as r, member_id from community_members
        where creator_id = ${creatorId} and community_id = ${communityId}`.execute(conn);
      const M = (await sql<{ n: number }>`select count(*)::int as n from seed_readers`.execute(conn)).rows[0]!.n;
      if (M < 1) throw new Error('the community has no members to engage');
      // A post's engagers walk the readers from a random start by a stride prime to M: distinct
      // members up to M per post, so kudos and views respect their primary keys without a dedupe
      // pass, and a post's first k kudoers are among its first v ≥ k viewers.
      const stride = [7919, 7927, 7933, 104_729].find((p) => M % p !== 0)!;

      // Each post's share of the engagement: the power law on age times a random popularity
      // (exponential, mean 1); counts rounded at random so they add up to the targets on average.
      // Views at least the kudos: whoever gave kudos read the post.
      const K = Math.round(opts.engagement * 0.4);
      const V = Math.round(opts.engagement * 0.6);
      await sql`create temporary table seed_weight on commit preserve rows as
        select id, created_at, o, kudos, least(${M}::int, greatest(kudos, floor(${V}::bigint * share + random())))::int as views,
               floor(${Math.round(opts.comments)}::bigint * share + random())::int as comments
        from (select id, created_at, share, floor(random() * ${M}::int)::int as o, least(${M}::int, floor(${K}::bigint * share + random()))::int as kudos
              from (select id, created_at, w / sum(w) over () as share
                    from (select id, created_at, power(extract(epoch from ${now}::timestamptz - created_at) / 86400 + 2, ${-AGE_EXPONENT}::float8) * -ln(1 - random()) as w
                          from posts where community_id = ${communityId}) p) s) k`.execute(conn);

      // Temporary tables are never analyzed by autovacuum; without statistics (here and on the views
      // below) the poll votes' insert once ran over 15 minutes at 100k posts.
      await sql`analyze seed_weight`.execute(conn);

      const walk = (j: string) => sql.raw(`(w.o + ${j}::bigint * ${stride}) % ${M}`);
      // Skewed towards soon after the post, as readers come from the feed's first pages.
      const after = (exponent: number) => sql.raw(`w.created_at + power(random(), ${exponent}) * ('${now.toISOString()}'::timestamptz - w.created_at)`);
      rows.kudos = Number((await sql`insert into post_kudos (post_id, member_id, creator_id, created_at)
        select w.id, r.member_id, ${creatorId}, ${after(4)}
        from seed_weight w cross join lateral generate_series(0, w.kudos - 1) j join seed_readers r on r.r = ${walk('j')}`.execute(conn)).numAffectedRows ?? 0);
      phase(`inserted ${rows.kudos} kudos (target ${K})`);
      rows.views = Number((await sql`insert into post_views (post_id, member_id, day, creator_id)
        select w.id, r.member_id, (${after(3)})::date, ${creatorId}
        from seed_weight w cross join lateral generate_series(0, w.views - 1) j join seed_readers r on r.r = ${walk('j')}`.execute(conn)).numAffectedRows ?? 0);
      phase(`inserted ${rows.views} views (target ${V})`);
      // Comments by members who viewed the post (several from one member allowed).
      rows.comments = Number((await sql`insert into post_comments (id, post_id, creator_id, member_id, body, created_at)
        select ${uuid7('t.at')}, w.id, ${creatorId}, r.member_id, (${COMMENTS}::text[])[1 + floor(random() * ${COMMENTS.length})::int], t.at
        from seed_weight w cross join lateral generate_series(1, w.comments) j
        cross join lateral (select ${after(4)} + j * interval '0' as at, floor(random() * greatest(w.views, 1))::int + 0 * j as k) t
        join seed_readers r on r.r = ${walk('t.k')}`.execute(conn)).numAffectedRows ?? 0);
      phase(`inserted ${rows.comments} comments`);

      // The views just written, planned with statistics (autovacuum may not have come by yet).
      await sql`analyze posts, post_views`.execute(conn);
      // Poll votes from 40% of each poll's viewers: one option, or for multiple choice one or two.
      rows.poll_votes = Number((await sql`insert into poll_votes (post_id, member_id, option, creator_id, created_at)
        select v.post_id, v.member_id, o.option, ${creatorId}, v.at
        from (select pv.post_id, pv.member_id, p.poll_multiple, cardinality(p.poll_options) as n, floor(random() * cardinality(p.poll_options))::int as o1,
                     random() as r, p.created_at + power(random(), 4) * (least(${now}::timestamptz, coalesce(p.poll_closes_at, ${now}::timestamptz)) - p.created_at) as at
              from (select distinct post_id, member_id from post_views where post_id in (select id from seed_weight)) pv
              join posts p on p.id = pv.post_id where p.poll_options is not null and random() < 0.4) v
        cross join lateral (select v.o1 as option union all select (v.o1 + 1 + floor(random() * (v.n - 1))::int) % v.n where v.poll_multiple and v.r < 0.5) o`.execute(conn))
        .numAffectedRows ?? 0);
      phase(`inserted ${rows.poll_votes} poll votes`);

      // The counters the engagement writes keep, set to exactly what was seeded.
      await sql`insert into post_counts (post_id, creator_id, kudos_count, comments_count, views_count, poll_votes, poll_voters)
        select p.id, p.creator_id, coalesce(k.n, 0), coalesce(c.n, 0), coalesce(v.n, 0),
               case when p.poll_options is not null then array(
                 select coalesce(pv.n, 0)::int from generate_subscripts(p.poll_options, 1) o
                 left join (select option, count(*) as n from poll_votes where post_id = p.id group by option) pv on pv.option = o - 1 order by o) end,
               case when p.poll_options is not null then (select count(distinct member_id)::int from poll_votes where post_id = p.id) else 0 end
        from posts p
        left join (select post_id, count(*) as n from post_kudos group by post_id) k on k.post_id = p.id
        left join (select post_id, count(*) as n from post_comments group by post_id) c on c.post_id = p.id
        left join (select post_id, count(*) as n from post_views group by post_id) v on v.post_id = p.id
        where p.community_id = ${communityId}
        order by p.created_at`.execute(conn);
      await sql`update communities set posts_count = (select count(*) from posts where community_id = ${communityId} and deleted_at is null) where id = ${communityId}`.execute(conn);
      phase('counted (post_counts, communities.posts_count)');
      await sql`drop table seed_content, seed_readers, seed_weight`.execute(conn);
    });

    // Tokens: 3/4 for members whose best live tier here is the top one, 1/4 the lowest one.
    const liveAt = (position: number, limit: number) => sql<{ member_id: string }>`
      select member_id from subscriptions
      where community_id = ${communityId} and status = any(${[...LIVE_STATUSES]}::text[])
      group by member_id having max(array_position(${tierIds}::uuid[], tier_id)) = ${position}::int
      order by random() limit ${limit}::int`.execute(db);
    const wantFull = Math.ceil(opts.tokens * 0.75);
    const mint = async (memberIds: string[]) => {
      const minted = memberIds.map(() => generateMemberToken());
      await sql`insert into member_tokens (id, member_id, token_hash, expires_at)
        select gen_random_uuid(), m, h, now() + interval '30 days' from unnest(${memberIds}::uuid[], ${minted.map((m) => m.hash)}::bytea[]) as t(m, h)`.execute(db);
      return minted.map((m) => m.token);
    };
    const fullTokens = await mint((await liveAt(tierIds.length, wantFull)).rows.map((r) => r.member_id));
    const lockedTokens = tierIds.length > 1 ? await mint((await liveAt(1, Math.floor(opts.tokens) - wantFull)).rows.map((r) => r.member_id)) : [];
    if (fullTokens.length + lockedTokens.length < opts.tokens) log(`only ${fullTokens.length} + ${lockedTokens.length} members live at the top/lowest tier: fewer tokens than ${opts.tokens}`);
    phase(`minted ${fullTokens.length} top-tier and ${lockedTokens.length} lowest-tier member tokens`);

    // Vacuumed, not only analyzed: the visibility map lets index-only probes (a member's kudos, votes) skip the heap from the first request.
    await sql`vacuum (analyze) posts, post_counts, post_kudos, post_views, post_comments, poll_votes, communities, member_tokens`.execute(db);
    phase('vacuumed and analyzed');

    const ids = async (q: RawBuilder<{ id: string }>) => (await q.execute(db)).rows.map((r) => r.id);
    const live = sql`community_id = ${communityId} and deleted_at is null`;
    const recent = await ids(sql`select id from posts where ${live} and not pinned order by created_at desc limit 1000`);
    const fixture: FeedFixture = {
      members: opts.members,
      main,
      community_id: communityId,
      posts: P,
      posts_count: (await sql<{ n: number }>`select posts_count as n from communities where id = ${communityId}`.execute(db)).rows[0]!.n,
      pinned_post_ids: await ids(sql`select id from posts where ${live} and pinned order by created_at desc`),
      recent_post_ids: recent,
      older_post_ids: await ids(sql`select id from (select id from posts where ${live} and not pinned order by created_at desc offset 1000) o order by random() limit 200`),
      locked_post_id: (await ids(sql`select id from posts where ${live} and tier_min_id = ${tierIds.at(-1)!} order by created_at desc limit 1`))[0] ?? null,
      full_tokens: fullTokens,
      locked_tokens: lockedTokens,
      rows,
      seed_s: { members: Math.round((started - membersStarted) / 1000), feed: Math.round((Date.now() - started) / 1000) },
    };
    log(`seeded ${P} posts (${fixture.posts_count} live), ${rows.kudos + rows.views} engagement rows in ${fixture.seed_s.feed} s (+ ${fixture.seed_s.members} s of members)`);
    return fixture;
  } finally {
    await close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error('DATABASE_URL is required (postgres://...)');
    process.exit(1);
  }
  const argv = process.argv.slice(2);
  // --name value or --name=value
  const arg = (name: string, fallback: number) => {
    const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
    return i < 0 ? fallback : Number(argv[i]!.includes('=') ? argv[i]!.slice(name.length + 3) : argv[i + 1]);
  };
  const opts = { members: arg('members', 20_000), posts: arg('posts', 100_000), engagement: arg('engagement', 2_000_000), comments: arg('comments', arg('engagement', 2_000_000) / 20), tokens: arg('tokens', 2000) };
  seedFeed(url, opts)
    .then((fixture) => console.log(JSON.stringify(fixture)))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
