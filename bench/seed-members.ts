/**
 * Seeds one creator's member directory at scale, straight through SQL (the API would take
 * days at a million members):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/tribes npm run seed:members -- --members 1000000
 *
 * Migrates the database first, then writes one creator with a real (hashed) API key, three
 * communities, five tiers, `members` members with varied names (Brazilian and Portuguese,
 * international, some accented; "Silva" about one in twenty, a few rare names five times
 * each), ~1.2 subscriptions per member in every status and tier (a second community for
 * some, a cancel-and-rejoin for others) joined over the past year, a year of activity
 * (member_activity.last_active_at) and ~2.5 workout logs per member over the last 60 days.
 * The directory rows are rebuilt from the subscriptions as the mirror would have written
 * them. Progress goes to stderr; the last line of stdout is the fixture as JSON.
 *
 * Set-based throughout (generate_series, one statement per table), so 1M members take
 * minutes on two cores.
 */
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { newId } from '../src/db/ids.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { generateApiKey } from '../src/http/auth.js';
import { seedExerciseCatalog } from '../src/modules/exercises/seed.js';
import { createMetricsAggregates } from '../src/modules/metrics/aggregates.js';
import { createMembershipRepo } from '../src/modules/subscriptions/membership.repo.js';
import { phaseTimer } from './progress.js';

export interface MembersFixture {
  creator_id: string;
  api_key: string;
  community_ids: string[];
  tier_ids: string[];
}

/** Rare last names, each given to about five members: `q=` a needle with few matches. */
export const RARE_NAMES = ['Okonkwo', 'Wąsowska', 'Nakashima', 'Abernathy', 'Zvonimirović'];
/** The rare name the bench searches for (RARE_NAMES[0], folded). */
export const RARE_QUERY = 'okonkwo';
/** Share of members named Silva (first or only last name), the common search. */
const SILVA_SHARE = 0.05;

const FIRST_NAMES = [
  // Brazilian and Portuguese
  'João', 'José', 'Antônio', 'Francisco', 'Carlos', 'Paulo', 'Pedro', 'Lucas', 'Luiz', 'Marcos', 'Luís', 'Gabriel', 'Rafael',
  'Daniel', 'Marcelo', 'Bruno', 'Eduardo', 'Felipe', 'Raimundo', 'Rodrigo', 'Sebastião', 'Márcio', 'Fábio', 'Vinícius', 'Thiago',
  'Caio', 'Otávio', 'Maria', 'Ana', 'Francisca', 'Antônia', 'Adriana', 'Juliana', 'Márcia', 'Fernanda', 'Patrícia', 'Aline',
  'Conceição', 'Lúcia', 'Inês', 'Fátima', 'Luíza', 'Letícia', 'Bárbara', 'Débora', 'Jéssica', 'Mônica', 'Tânia', 'Cecília',
  'Beatriz', 'Larissa', 'Camila', 'Gisele', 'Maria Eduarda', 'João Pedro', 'Ana Clara',
  // International
  'Emma', 'Liam', 'Olivia', 'Noah', 'Sophie', 'Lukas', 'Jürgen', 'Zoë', 'Chloé', 'François', 'Søren', 'Björn', 'Mohammed',
  'Aiko', 'Hiroshi', 'Wei', 'Priya', 'Arjun', 'Mateo', 'Valentina', 'Sofía', 'Andrés', 'Ángel', 'Nicolás', 'Renée', 'Siobhán',
];

const LAST_NAMES = [
  // Brazilian and Portuguese (Silva is drawn separately, at SILVA_SHARE)
  'Santos', 'Oliveira', 'Souza', 'Rodrigues', 'Ferreira', 'Alves', 'Pereira', 'Lima', 'Gomes', 'Costa', 'Ribeiro', 'Martins',
  'Carvalho', 'Almeida', 'Lopes', 'Soares', 'Fernandes', 'Vieira', 'Barbosa', 'Rocha', 'Dias', 'Nascimento', 'Andrade',
  'Moreira', 'Nunes', 'Marques', 'Machado', 'Mendes', 'Freitas', 'Cardoso', 'Ramos', 'Gonçalves', 'Araújo', 'Magalhães',
  'Brandão', 'Simões', 'Peçanha', 'Conceição', 'Assunção', 'Falcão', 'Silveira', 'Sá',
  // International
  'Müller', 'Schmidt', 'Schäfer', 'Weiß', 'García', 'Hernández', 'López', 'Martínez', 'González', 'Pérez', 'Smith', 'Johnson',
  'Brown', 'Williams', 'Nguyen', 'Kim', 'Rossi', 'Bianchi', 'Ricci', 'Dubois', 'Lefèvre', 'Moreau', "O'Brien", 'Kowalski',
  'Nowak', 'Jansen', 'Andersen', 'Sørensen', 'Yılmaz', 'Öztürk', 'Tanaka', 'Satō', 'Patel', 'Singh', 'Cohen',
];

const EMAIL_DOMAINS = ['example.com', 'example.com.br', 'example.org', 'example.net'];

// Three communities; five tiers over them (index = position in the arrays passed to SQL).
const COMMUNITIES = [
  { name: 'Hipertrofia Total', slug: 'hipertrofia-total', category: 'musculacao' },
  { name: 'Yoga em Casa', slug: 'yoga-em-casa', category: 'yoga' },
  { name: 'Clube de Corrida', slug: 'clube-de-corrida', category: 'corrida' },
] as const;
const TIERS = [
  { community: 0, name: 'Básico', price_cents: 2990, billing_period: 'monthly', days: 30, trial_days: 7 },
  { community: 0, name: 'Premium', price_cents: 22990, billing_period: 'quarterly', days: 91, trial_days: 7 },
  { community: 1, name: 'Mensal', price_cents: 3990, billing_period: 'monthly', days: 30, trial_days: 14 },
  { community: 1, name: 'Anual', price_cents: 39900, billing_period: 'yearly', days: 365, trial_days: 14 },
  { community: 2, name: 'Clube', price_cents: 1990, billing_period: 'monthly', days: 30, trial_days: 7 },
] as const;

/**
 * A UUIDv7-shaped id whose time field is a counter (`ms`, SQL bigint) and whose remaining
 * bits are random: rows inserted in counter order land at the right edge of their indexes,
 * as ids made by newId() do.
 */
const seqUuid = (ms: string) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || (array['8','9','a','b'])[1 + floor(random() * 4)::int] || substr(md5(random()::text), 1, 15))::uuid`;

const log = (msg: string) => process.stderr.write(`[seed:members] ${msg}\n`);

export async function seedMembers(url: string, opts: { members: number }): Promise<MembersFixture> {
  const n = Math.floor(opts.members);
  if (!Number.isInteger(n) || n < 1) throw new Error(`members must be a positive integer, got ${opts.members}`);
  const { db, close } = connectPostgres({ url, poolMax: 1, statementTimeoutMs: 3_600_000 });
  const { started, phase } = phaseTimer(log);
  try {
    await migrateToLatest(db);
    await seedExerciseCatalog(db);
    phase('migrated');

    const run = crypto.randomBytes(4).toString('hex');
    const creatorId = newId();
    const communityIds = COMMUNITIES.map(() => newId());
    const tierIds = TIERS.map(() => newId());
    const apiKey = generateApiKey();
    // The seed's clock: every date below is relative to it, so one run is self-consistent.
    const now = new Date();

    await db.insertInto('creators').values({ id: creatorId, name: 'Members Bench Creator', email: `members-bench-${run}@example.com`, processor_account_id: null }).execute();
    await db.insertInto('api_keys').values({ id: newId(), creator_id: creatorId, key_hash: apiKey.hash, prefix: apiKey.prefix }).execute();
    await db
      .insertInto('communities')
      .values(COMMUNITIES.map((c, i) => ({ id: communityIds[i]!, creator_id: creatorId, name: c.name, slug: `${c.slug}-${run}`, category: c.category, description: null, cover_image_url: null })))
      .execute();
    await db
      .insertInto('tiers')
      .values(
        TIERS.map((t, i) => ({
          id: tierIds[i]!,
          creator_id: creatorId,
          community_id: communityIds[t.community]!,
          name: t.name,
          price_cents: t.price_cents,
          billing_period: t.billing_period,
          trial_days: t.trial_days,
          level: i,
          processor_product_id: null,
          processor_price_id: null,
        })),
      )
      .execute();

    // One connection for the rest: the plan is a temporary table, and the settings are the session's.
    await db.connection().execute(async (conn) => {
      await sql`set synchronous_commit = off`.execute(conn);
      await sql`set work_mem = '256MB'`.execute(conn);
      await sql`set maintenance_work_mem = '512MB'`.execute(conn);

      // Each member's draws: name, communities (c1 always; c2 for ~12%), a cancel-and-rejoin
      // in c1 for ~8% (old subscription from 200–365 days ago, 30–150 days long, rejoined 1–30 days later).
      const rareEvery = Math.max(Math.floor(n / 5), RARE_NAMES.length + 1);
      const idBase = Date.now() - 2 * n;
      await sql`create temporary table seed_plan on commit preserve rows as
        select i, ${sql.raw(seqUuid(`${idBase}::bigint + i`))} as member_id, f.first, l.last, x.c1,
               case when random() < 0.12 then 1 + (x.c1 + floor(random() * 2)::int) % 3 end as c2,
               random() < 0.08 as resub, 200 + random() * 165 as old_start_days, 30 + random() * 120 as old_len_days, 1 + random() * 29 as gap_days
        from generate_series(1, ${n}::int) as i
        cross join lateral (select (${FIRST_NAMES}::text[])[1 + floor(random() * ${FIRST_NAMES.length})::int + 0 * i] as first) f
        cross join lateral (select case
            when i % ${rareEvery}::int between 1 and ${RARE_NAMES.length}::int then (${RARE_NAMES}::text[])[i % ${rareEvery}::int]
            when random() < 0.2 + 0 * i then
              (case when random() < ${SILVA_SHARE} then 'Silva' else (${LAST_NAMES}::text[])[1 + floor(random() * ${LAST_NAMES.length})::int] end) || ' ' ||
              (case when random() < ${SILVA_SHARE} then 'Silva' else (${LAST_NAMES}::text[])[1 + floor(random() * ${LAST_NAMES.length})::int] end)
            when random() < ${SILVA_SHARE} then 'Silva'
            else (${LAST_NAMES}::text[])[1 + floor(random() * ${LAST_NAMES.length})::int] end as last) l
        cross join lateral (select case when r < 0.55 then 1 when r < 0.85 then 2 else 3 end as c1 from (select random() + 0 * i as r) r) x`.execute(conn);
      await sql`analyze seed_plan`.execute(conn);
      phase(`planned ${n} members`);

      await sql`insert into members (id, name, email, password_hash, created_at, updated_at)
        select member_id, first || ' ' || last,
               regexp_replace(regexp_replace(fold(first || '.' || last), ' ', '.', 'g'), '[^a-z0-9.]+', '', 'g') || '.' || i || '.' || ${run}
                 || '@' || (${EMAIL_DOMAINS}::text[])[1 + floor(random() * ${EMAIL_DOMAINS.length})::int],
               null, t, t
        from (select p.*, ${now}::timestamptz - interval '400 days' - random() * interval '700 days' as t from seed_plan p) p
        order by i`.execute(conn);
      phase(`inserted ${n} members`);

      // Subscriptions: kind 0 = the canceled one before a rejoin, 1 = the member's current one
      // in c1, 2 = the one in c2. Status of kinds 1 and 2: trialing 7%, past_due 5%, active
      // with cancel at period end 5%, canceled 23%, active 60%. Joined over the past year,
      // more of them recently; a trial started within its tier's trial days.
      const subBase = Date.now() - 4 * n;
      const tiers = {
        community: TIERS.map((t) => t.community + 1),
        price: TIERS.map((t) => t.price_cents),
        period: TIERS.map((t) => t.billing_period),
        days: TIERS.map((t) => t.days),
        trial: TIERS.map((t) => t.trial_days),
      };
      await sql`insert into subscriptions (id, creator_id, community_id, tier_id, member_id, status, price_cents, billing_period,
          current_period_start, current_period_end, cancel_at_period_end, canceled_at, ended_at, trial_end, processor_subscription_id, created_at, updated_at)
        select id, ${creatorId}, (${communityIds}::uuid[])[c], (${tierIds}::uuid[])[tier], member_id, status,
               (${tiers.price}::bigint[])[tier], (${tiers.period}::text[])[tier],
               case when status = 'trialing' then created
                    when status = 'canceled' then greatest(created, ended - pd)
                    else created + floor(extract(epoch from ${now}::timestamptz - created) / extract(epoch from pd)) * pd end,
               case when status = 'trialing' then created + td
                    when status = 'canceled' then ended
                    else created + (floor(extract(epoch from ${now}::timestamptz - created) / extract(epoch from pd)) + 1) * pd end,
               cape,
               case when status = 'canceled' then ended - (ended - created) * 0.3 * u
                    when cape then ${now}::timestamptz - least(pd, ${now}::timestamptz - created) * u end,
               case when status = 'canceled' then ended end,
               case when status = 'trialing' then created + td end,
               'sub_seed_' || id, created, case when status = 'canceled' then ended else ${now}::timestamptz end
        from (
          select y.*, ${sql.raw(seqUuid(`${subBase}::bigint + 4 * i + kind`))} as id,
                 (${tiers.days}::int[])[tier] * interval '1 day' as pd, (${tiers.trial}::int[])[tier] * interval '1 day' as td
          from (
            select x.*, created + case when kind = 0 then old_len_days * interval '1 day' else (${now}::timestamptz - created) * (0.05 + 0.95 * random()) end as ended
            from (
              select w.*,
                     case when status = 'trialing' then ${now}::timestamptz - random() * (${tiers.trial}::int[])[tier] * interval '1 day'
                          when kind = 0 then ${now}::timestamptz - old_start_days * interval '1 day'
                          when kind = 1 and resub then ${now}::timestamptz - (old_start_days - old_len_days - gap_days) * interval '1 day'
                          else ${now}::timestamptz - power(random(), 1.3) * interval '365 days' end as created
              from (
                select v.*,
                       case when kind = 0 then 'canceled' when rs < 0.07 then 'trialing' when rs < 0.12 then 'past_due'
                            when rs < 0.40 and rs >= 0.17 then 'canceled' else 'active' end as status,
                       kind > 0 and rs >= 0.12 and rs < 0.17 as cape
                from (
                  select p.i, p.member_id, p.resub, p.old_start_days, p.old_len_days, p.gap_days, k.kind, k.c,
                         case k.c when 1 then case when random() < 0.7 then 1 else 2 end
                                  when 2 then case when random() < 0.75 then 3 else 4 end
                                  else 5 end as tier,
                         random() as rs, random() as u
                  from seed_plan p
                  cross join lateral (values (0, p.c1), (1, p.c1), (2, p.c2)) as k(kind, c)
                  where k.kind = 1 or (k.kind = 0 and p.resub) or (k.kind = 2 and p.c2 is not null)
                ) v
              ) w
            ) x
          ) y
        ) z
        order by i, kind`.execute(conn);
      phase('inserted subscriptions');

      // Statistics that know this creator's rows (a previous seed's ANALYZE in the same
      // database does not): the statements below are planned from them.
      await sql`analyze members, subscriptions`.execute(conn);
      // The directory follows subscriptions through the mirror; these were written around it.
      await createMembershipRepo().rebuild(creatorId, conn);
      await sql`analyze creator_members, community_members`.execute(conn);
      phase('rebuilt the directory (creator_members, community_members)');

      // A year of activity: never active 8%; otherwise within the last 14 days (67%, most of
      // them in the last few days) or earlier since joining (25%). Churned members mostly earlier
      // (10% never, 10% recently, 80% earlier).
      // One pass over the creator's rows; the draws of a row come from a subquery evaluated per row.
      await sql`update member_activity x set last_active_at = (
          select case when a.bucket = 'never' then null
                      when a.bucket = 'recent' or m.joined_at > ${now}::timestamptz - interval '14 days'
                        then ${now}::timestamptz - least(interval '14 days' * a.u * a.u, (${now}::timestamptz - m.joined_at) * a.u)
                      else m.joined_at + (${now}::timestamptz - interval '14 days' - m.joined_at) * a.u end
          from (select u, case when (m.state = 'churned' and r < 0.10) or (m.state <> 'churned' and r < 0.08) then 'never'
                               when (m.state = 'churned' and r < 0.20) or (m.state <> 'churned' and r < 0.75) then 'recent'
                               else 'earlier' end as bucket
                from (select random() as r, random() as u) d) a)
        from creator_members m
        where m.creator_id = ${creatorId} and x.creator_id = m.creator_id and x.member_id = m.member_id`.execute(conn);
      phase('set last_active_at');

      // Workout logs for 85% of the members active in the last 60 days: the newest at their
      // last activity, a streak of consecutive days before it, then one every 2–4 days; never
      // before joining. In the community of their current subscription.
      const logBase = Date.now() - 16 * n;
      await sql`insert into workout_logs (id, member_id, creator_id, community_id, workout_id, performed_at, sets_count, created_at)
        select ${sql.raw(seqUuid(`${logBase}::bigint + 16 * d.i + j`))}, d.member_id, ${creatorId}, (${communityIds}::uuid[])[d.c1], null, t.at,
               3 + floor(random() * 10)::int, t.at
        from (
          select p.i, m.member_id, p.c1, m.joined_at, x.last_active_at,
                 1 + floor(power(random(), 1.5) * 11)::int as logs, power(random(), 2) as streak_share, 1 + floor(random() * 3)::int as gap
          from creator_members m join seed_plan p on p.member_id = m.member_id
          join member_activity x on x.creator_id = m.creator_id and x.member_id = m.member_id
          where m.creator_id = ${creatorId} and x.last_active_at > ${now}::timestamptz - interval '60 days' and random() < 0.85
        ) d
        cross join lateral (select greatest(1, ceil(d.streak_share * d.logs))::int as streak) s
        cross join lateral generate_series(0, d.logs - 1) as j
        cross join lateral (select case when j < s.streak then d.last_active_at - j * interval '1 day'
                                        else d.last_active_at - (s.streak - 1 + (j - s.streak + 1) * (d.gap + 1)) * interval '1 day' - random() * interval '3 hours' end as at) t
        where t.at >= d.joined_at
        order by d.i, j`.execute(conn);
      phase('inserted workout logs');

      // The feed, so a member's 30-day comment count reads real rows: three posts a day for 120
      // days across the communities (one in 25 deleted), and 1–5 comments from 40% of the
      // members active in the last 30 days, each on one of the month's posts, after it.
      await sql`insert into posts (id, creator_id, community_id, content, content_html, preview_auto, created_at, updated_at, deleted_at)
        select tribes_uuid_v7(), ${creatorId}, (${communityIds}::uuid[])[1 + k % 3], 'Bench post', '<p>Bench post</p>', 'Bench post', t.at, t.at,
               case when k % 25 = 3 then t.at + interval '1 hour' end
        from generate_series(0, 359) k cross join lateral (select ${now}::timestamptz - k * interval '8 hours' - interval '1 minute' as at) t`.execute(conn);
      await sql`insert into post_comments (id, post_id, creator_id, member_id, body, created_at)
        with recent as (
          select array_agg(id order by created_at desc) as ids, array_agg(created_at order by created_at desc) as ats
          from (select id, created_at from posts where creator_id = ${creatorId} order by created_at desc limit 90) q)
        select tribes_uuid_v7(), recent.ids[r.pick], ${creatorId}, d.member_id, 'Great session!', recent.ats[r.pick] + random() * (${now}::timestamptz - recent.ats[r.pick])
        from (select m.member_id, 1 + floor(random() * 5)::int as comments from creator_members m
              join member_activity x on x.creator_id = m.creator_id and x.member_id = m.member_id
              where m.creator_id = ${creatorId} and x.last_active_at > ${now}::timestamptz - interval '30 days' and random() < 0.4) d
        cross join lateral generate_series(1, d.comments) c
        cross join lateral (select 1 + floor(random() * 90)::int + 0 * c as pick) r
        cross join recent`.execute(conn);
      phase('inserted posts and comments');

      await sql`drop table seed_plan`.execute(conn);
    });

    // The creator metrics' counters (which community and tier figures read) follow subscriptions
    // through the mirror too: computed here as reconciliation would, so the server's start-up
    // task does not build them in the middle of a measured run.
    await db.transaction().execute((trx) => createMetricsAggregates().rebuild(creatorId, trx));
    phase('built the metrics counters');

    // The activity update left every directory row twice: rewritten compact, table and indexes.
    await sql`vacuum full creator_members`.execute(db);
    phase('compacted creator_members');
    // Vacuumed, not only analyzed: the visibility map is what lets the directory's index-only
    // walks (deep pages, counts) skip the heap, and without it the results would depend on
    // whether autovacuum got to the fresh tables before the bench did.
    await sql`vacuum (analyze)`.execute(db);
    phase('vacuumed and analyzed');
    log(`seeded ${n} members in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { creator_id: creatorId, api_key: apiKey.key, community_ids: communityIds, tier_ids: tierIds };
  } finally {
    await close();
  }
}

function membersArg(argv: string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--members') return Number(argv[i + 1]);
    if (a.startsWith('--members=')) return Number(a.slice('--members='.length));
  }
  return 1_000_000;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error('DATABASE_URL is required (postgres://...)');
    process.exit(1);
  }
  seedMembers(url, { members: membersArg(process.argv.slice(2)) })
    .then((fixture) => console.log(JSON.stringify(fixture)))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
