/**
 * Seeds one running challenge with a large leaderboard on a database seeded by
 * bench/seed-members.ts, straight through SQL and the production scoring:
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/tribes npx tsx bench/seed-challenges.ts --participants 100000
 *   ... --participants 100000 --members 110000 --tokens 10000   # members seeded first (default 1.1 × participants)
 *
 * The challenge (workouts_count, started 20 days ago, 60 days long) is in the creator's
 * first community. `participants` of the creator's members take part, joined over the last
 * 20 days. Besides their seeded history each gets 0–30 more logs in the window (skewed: most
 * a few, some many), so the board has spread and ties; their scores are computed by the
 * production rescore(). The daily job (createStandings) then ranks yesterday, and a few
 * thousand participants log again "today" and are rescored, so `delta` moves both ways.
 * Finally: participants_count, `tokens` member tokens for participants spread evenly over
 * the ranking (returned shuffled), and a vacuum (analyze). Progress goes to stderr; the last
 * line of stdout is the fixture as JSON.
 */
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { newId } from '../src/db/ids.js';
import { rescore } from '../src/modules/challenges/scores.js';
import { createStandings, utcDay } from '../src/modules/challenges/standings.js';
import { generateMemberToken } from '../src/modules/members/member-auth.js';
import { seedMembers, type MembersFixture } from './seed-members.js';
import { phaseTimer } from './progress.js';

export interface ChallengeFixture {
  challenge_id: string;
  /** Tokens of participants spread evenly over the ranking, in random order. */
  member_tokens: string[];
}

const DAY_MS = 86_400_000;
const STARTED_DAYS_AGO = 20;
const DURATION_DAYS = 60;
/** Most extra logs a participant gets in the window (skewed towards few). */
const MAX_EXTRA_LOGS = 30;
/** Share of participants who log again today, after yesterday was ranked (at least one). */
const PERTURBED_SHARE = 0.03;

/** A UUIDv7-shaped id whose time field is a counter (as in seed-members.ts): rows land at the right edge of the index. */
const seqUuid = (ms: string) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || (array['8','9','a','b'])[1 + floor(random() * 4)::int] || substr(md5(random()::text), 1, 15))::uuid`;

const log = (msg: string) => process.stderr.write(`[seed:challenges] ${msg}\n`);

export async function seedChallenge(url: string, fixture: MembersFixture, opts: { participants: number; tokens: number }): Promise<ChallengeFixture> {
  const n = Math.floor(opts.participants);
  if (!Number.isInteger(n) || n < 1) throw new Error(`participants must be a positive integer, got ${opts.participants}`);
  const { db, close } = connectPostgres({ url, poolMax: 1, statementTimeoutMs: 3_600_000 });
  const { started, phase } = phaseTimer(log);
  try {
    const creatorId = fixture.creator_id;
    const communityId = fixture.community_ids[0]!;
    const challengeId = newId();
    const now = new Date();
    // Today's UTC midnight: the daily job ranks the day before it.
    const cutoff = new Date(`${utcDay(now)}T00:00:00.000Z`);
    const startsAt = new Date(now.getTime() - STARTED_DAYS_AGO * DAY_MS);

    const available = (await db.selectFrom('creator_members').select(sql<number>`count(*)::int`.as('n')).where('creator_id', '=', creatorId).executeTakeFirstOrThrow()).n;
    if (available < n) throw new Error(`the creator has ${available} members, fewer than ${n} participants`);

    await db
      .insertInto('challenges')
      .values({
        id: challengeId,
        creator_id: creatorId,
        community_id: communityId,
        name: 'Desafio 60 dias',
        description: 'Treine o máximo de dias que conseguir: cada treino registrado conta um ponto.',
        metric: 'workouts_count',
        exercise_id: null,
        duration_days: DURATION_DAYS,
        starts_at: startsAt,
        ends_at: new Date(startsAt.getTime() + DURATION_DAYS * DAY_MS),
        tier_min_id: null,
        canceled_at: null,
      })
      .execute();

    // Participants: a random sample of the creator's members, joined over the challenge so far.
    await sql`insert into challenge_participants (member_id, challenge_id, creator_id, joined_at, reached_at)
      select member_id, ${challengeId}, ${creatorId}, j, j
      from (select member_id, ${startsAt}::timestamptz + random() * (${now}::timestamptz - ${startsAt}::timestamptz) as j
            from creator_members where creator_id = ${creatorId} order by random() limit ${n}) s
      order by member_id`.execute(db);
    phase(`inserted ${n} participants`);

    // More training in the window, before today: 0–30 logs each, most participants a few and
    // some many (power-law draw), at random moments between the start and today's midnight.
    const logBase = Date.now() - (MAX_EXTRA_LOGS + 1) * n;
    const extra = await sql`insert into workout_logs (id, member_id, creator_id, community_id, workout_id, performed_at, sets_count, created_at)
      select ${sql.raw(seqUuid(`${logBase}::bigint + ${MAX_EXTRA_LOGS + 1} * d.i + j`))}, d.member_id, ${creatorId}, ${communityId}, null, t.at,
             3 + floor(random() * 10)::int, t.at
      from (select row_number() over () as i, member_id, floor(power(random(), 2.2) * ${MAX_EXTRA_LOGS + 1})::int as logs
            from challenge_participants where challenge_id = ${challengeId}) d
      cross join lateral generate_series(1, d.logs) as j
      cross join lateral (select ${startsAt}::timestamptz + random() * (${cutoff}::timestamptz - ${startsAt}::timestamptz) + j * interval '0' as at) t
      order by d.i, j`.execute(db);
    phase(`inserted ${extra.numAffectedRows ?? 0} more workout logs`);

    await sql`analyze challenge_participants, workout_logs`.execute(db);
    await rescore(db, sql`p.challenge_id = ${challengeId}`);
    phase('scored the participants (rescore)');

    // Yesterday's end-of-day ranks, as the daily job writes them.
    const ranked = await createStandings({ db, now: () => new Date() }).run();
    phase(`ranked ${ranked.day} (challenge_day_ranks)`);

    // Today's training for a few thousand: scores move past yesterday's ranks, so deltas differ.
    const perturbed = Math.max(1, Math.round(n * PERTURBED_SHARE));
    const movers = (
      await sql<{ member_id: string }>`select member_id from challenge_participants where challenge_id = ${challengeId} order by random() limit ${perturbed}`.execute(db)
    ).rows.map((r) => r.member_id);
    const todayBase = Date.now() - 8 * movers.length;
    await sql`insert into workout_logs (id, member_id, creator_id, community_id, workout_id, performed_at, sets_count, created_at)
      select ${sql.raw(seqUuid(`${todayBase}::bigint + 8 * (d.i - 1) + j`))}, d.member_id, ${creatorId}, ${communityId}, null,
             ${cutoff}::timestamptz + random() * (now() - ${cutoff}::timestamptz), 3 + floor(random() * 10)::int, now()
      from unnest(${movers}::uuid[]) with ordinality as d(member_id, i)
      cross join lateral generate_series(1, 1 + floor(power(random(), 2) * 8)::int + 0 * d.i) as j
      order by d.i, j`.execute(db);
    await rescore(db, sql`p.challenge_id = ${challengeId} and p.member_id = any(${movers}::uuid[])`);
    phase(`${movers.length} participants logged today and were rescored`);

    await sql`update challenges set participants_count = (select count(*) from challenge_participants where challenge_id = ${challengeId}) where id = ${challengeId}`.execute(db);

    // Tokens for participants at evenly spaced ranks (1, 1 + P/T, ...) among those who may read
    // the member board: a live (trialing, active or past_due) subscription in the community. The
    // sample above took any of the creator's members, and a lapsed participant's board is 403.
    const live = sql`exists (select 1 from subscriptions s where s.creator_id = ${creatorId} and s.member_id = cp.member_id
      and s.community_id = ${communityId} and s.status in ('trialing', 'active', 'past_due'))`;
    const readers = (await sql<{ n: number }>`select count(*)::int as n from challenge_participants cp where cp.challenge_id = ${challengeId} and ${live}`.execute(db)).rows[0]!.n;
    const wanted = Math.max(0, Math.min(Math.floor(opts.tokens), readers));
    const sampled = (
      await sql<{ member_id: string }>`
        with ranked as (
          select cp.member_id, row_number() over (order by cp.score desc, cp.reached_at, cp.member_id) - 1 as r
          from challenge_participants cp where cp.challenge_id = ${challengeId} and ${live})
        select member_id from ranked join generate_series(0, ${wanted}::int - 1) k on ranked.r = floor(k::numeric * ${readers} / ${wanted})
        order by random()`.execute(db)
    ).rows.map((r) => r.member_id);
    const tokens: string[] = [];
    for (let i = 0; i < sampled.length; i += 1000) {
      const ids = sampled.slice(i, i + 1000);
      const minted = ids.map(() => generateMemberToken());
      tokens.push(...minted.map((m) => m.token));
      await sql`insert into member_tokens (id, member_id, token_hash, expires_at)
        select gen_random_uuid(), m, h, now() + interval '30 days' from unnest(${ids}::uuid[], ${minted.map((m) => m.hash)}::bytea[]) as t(m, h)`.execute(db);
    }
    phase(`minted ${tokens.length} member tokens`);

    // Every participant row was written twice (inserted, then scored): rewritten compact, then
    // vacuumed and analyzed so the board's index-only walks skip the heap from the first request.
    await sql`vacuum full challenge_participants`.execute(db);
    await sql`vacuum (analyze)`.execute(db);
    phase('compacted, vacuumed and analyzed');

    const spread = await sql<{ max: string; median: string; zero: number; ranked: number }>`
      select max(score) as max, percentile_disc(0.5) within group (order by score) as median, count(*) filter (where score = 0)::int as zero,
             (select count(*)::int from challenge_day_ranks where challenge_id = ${challengeId}) as ranked
      from challenge_participants where challenge_id = ${challengeId}`.execute(db);
    const s = spread.rows[0]!;
    log(`seeded challenge ${challengeId}: ${n} participants, scores max ${s.max} median ${s.median}, ${s.zero} at 0, ${s.ranked} ranked yesterday; ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { challenge_id: challengeId, member_tokens: tokens };
  } finally {
    await close();
  }
}

function numberArg(argv: string[], name: string): number | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === `--${name}`) return Number(argv[i + 1]);
    if (a.startsWith(`--${name}=`)) return Number(a.slice(name.length + 3));
  }
  return undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error('DATABASE_URL is required (postgres://...)');
    process.exit(1);
  }
  const argv = process.argv.slice(2);
  const participants = numberArg(argv, 'participants') ?? 100_000;
  const members = numberArg(argv, 'members') ?? Math.ceil(participants * 1.1);
  const tokens = numberArg(argv, 'tokens') ?? 1000;
  seedMembers(url, { members })
    .then((fixture) => seedChallenge(url, fixture, { participants, tokens }).then((challenge) => console.log(JSON.stringify({ ...fixture, ...challenge }))))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
