import crypto from 'node:crypto';
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { newId } from '../src/db/ids.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { randomBase62, sha256 } from '../src/http/auth.js';
import { seedExerciseCatalog } from '../src/modules/exercises/seed.js';
import { MEMBER_TOKEN_PREFIX } from '../src/modules/members/member-auth.js';
import { createMembershipRepo } from '../src/modules/subscriptions/membership.repo.js';
import { rescore } from '../src/modules/challenges/scores.js';

/** The metrics of the bench's challenges, in order (BENCH_CHALLENGES=3: the first three). */
const CHALLENGE_METRICS = ['workouts_count', 'volume_kg', 'streak_days', 'workouts_with_exercise'] as const;

export interface BenchFixture {
  workoutId: string;
  exerciseIds: string[];
  tokens: string[];
}

/**
 * Seeds one creator's training history straight through SQL (the API would take hours):
 * a community, a program workout, `members` members with live subscriptions and tokens, and
 * members × logsPerMember × setsPerLog working sets spread over the past, with the personal
 * record state derived from that history, and `challenges` running challenges every member
 * takes part in. Everything lands in the schema the URL selects.
 */
export async function seedTrainingHistory(
  url: string,
  opts: { members: number; logsPerMember: number; setsPerLog: number; challenges?: number },
): Promise<BenchFixture> {
  const { db, close } = connectPostgres({ url, poolMax: 1, statementTimeoutMs: 3_600_000 });
  try {
    await migrateToLatest(db);
    await seedExerciseCatalog(db);
    const run = crypto.randomBytes(4).toString('hex');
    const creatorId = newId();
    const communityId = newId();
    const tierId = newId();
    const programId = newId();
    const workoutId = newId();
    const weighted = await db.selectFrom('exercises').select('id').where('creator_id', 'is', null).where('kind', '=', 'weighted').orderBy('id').limit(10).execute();
    const exerciseIds = weighted.map((e) => e.id);

    await db.insertInto('creators').values({ id: creatorId, name: 'Bench Creator', email: `bench-${run}@example.com`, processor_account_id: null }).execute();
    await db.insertInto('communities').values({ id: communityId, creator_id: creatorId, name: 'Bench', slug: `bench-${run}`, category: 'musculacao', description: null, cover_image_url: null }).execute();
    await db.insertInto('tiers').values({ id: tierId, creator_id: creatorId, community_id: communityId, name: 'Pro', price_cents: 4990, billing_period: 'monthly', level: null, processor_product_id: null, processor_price_id: null }).execute();
    await db.insertInto('workout_programs').values({ id: programId, creator_id: creatorId, community_id: communityId, name: 'Bench program', duration_weeks: 12, frequency_per_week: 4, level: 'advanced', goal: 'strength' }).execute();
    await db.insertInto('workouts').values({ id: workoutId, creator_id: creatorId, program_id: programId, name: 'A', position: 0 }).execute();

    const tokens = Array.from({ length: opts.members }, () => MEMBER_TOKEN_PREFIX + randomBase62(40));
    const memberIds = tokens.map(() => newId());
    for (let i = 0; i < tokens.length; i += 1000) {
      const ids = memberIds.slice(i, i + 1000);
      const hashes = tokens.slice(i, i + 1000).map((tk) => sha256(tk));
      await sql`insert into members (id, name, email) select id, 'Bench Member', 'bench-' || ${run} || '-' || id || '@example.com' from unnest(${ids}::uuid[]) as id`.execute(db);
      await sql`insert into subscriptions (id, creator_id, community_id, tier_id, member_id, status, price_cents, billing_period)
        select gen_random_uuid(), ${creatorId}, ${communityId}, ${tierId}, id, 'active', 4990, 'monthly' from unnest(${ids}::uuid[]) as id`.execute(db);
      await sql`insert into member_tokens (id, member_id, token_hash, expires_at)
        select gen_random_uuid(), m, h, now() + interval '30 days' from unnest(${ids}::uuid[], ${hashes}::bytea[]) as t(m, h)`.execute(db);
    }

    // The member directory follows subscriptions through the mirror; these were written around it.
    await createMembershipRepo().rebuild(creatorId, db);

    // History: one log per member per day going back, sets cycling through the exercises.
    await sql`insert into workout_logs (id, member_id, creator_id, community_id, workout_id, performed_at, sets_count)
      select gen_random_uuid(), m, ${creatorId}, ${communityId}, ${workoutId}, now() - make_interval(days => g) - interval '1 hour', ${opts.setsPerLog}
      from unnest(${memberIds}::uuid[]) as m, generate_series(1, ${opts.logsPerMember}) as g`.execute(db);
    await sql`insert into workout_sets (log_id, position, member_id, exercise_id, performed_at, reps, load_kg, is_warmup)
      select l.id, p, l.member_id, (${exerciseIds}::uuid[])[1 + (p % ${exerciseIds.length})], l.performed_at,
             1 + floor(random() * 12)::int, 2.5 * (4 + floor(random() * 60)), p = 0
      from workout_logs l, generate_series(0, ${opts.setsPerLog - 1}) as p
      where l.creator_id = ${creatorId}`.execute(db);
    // Record state as the PR rules leave it: per kind, the first working set reaching the best.
    await sql`insert into personal_records (member_id, exercise_id, kind, value, previous_value, log_id, set_position, creator_id, performed_at)
      select distinct on (s.member_id, s.exercise_id, k.kind) s.member_id, s.exercise_id, k.kind, k.value, null, s.log_id, s.position, ${creatorId}, s.performed_at
      from workout_sets s
      cross join lateral (values
        ('max_load', s.load_kg::float8),
        ('est_1rm', case when s.reps = 1 then s.load_kg::float8 else s.load_kg::float8 * (30 + s.reps) / 30 end),
        ('max_volume', s.load_kg::float8 * s.reps),
        ('max_reps', s.reps::float8)) as k(kind, value)
      where s.member_id = any(${memberIds}::uuid[]) and not s.is_warmup
      order by s.member_id, s.exercise_id, k.kind, k.value desc, s.performed_at, s.log_id, s.position`.execute(db);
    // Running challenges in the community with every member taking part (issue #13: the
    // logging statement scores each new log in each of them), scored from the history above.
    for (let i = 0; i < (opts.challenges ?? 0); i++) {
      const metric = CHALLENGE_METRICS[i % CHALLENGE_METRICS.length]!;
      const challengeId = newId();
      await sql`insert into challenges (id, creator_id, community_id, name, metric, exercise_id, duration_days, starts_at, ends_at, participants_count)
        values (${challengeId}, ${creatorId}, ${communityId}, ${`Bench ${metric}`}, ${metric}, ${metric === 'workouts_with_exercise' ? exerciseIds[0]! : null}, 60,
                date_trunc('day', now()) - interval '20 days', date_trunc('day', now()) + interval '40 days', ${memberIds.length})`.execute(db);
      await sql`insert into challenge_participants (member_id, challenge_id, creator_id, joined_at, reached_at)
        select m, ${challengeId}, ${creatorId}, now(), now() from unnest(${memberIds}::uuid[]) as m`.execute(db);
      await rescore(db, sql`p.challenge_id = ${challengeId}`);
    }
    await sql`analyze`.execute(db);
    return { workoutId, exerciseIds, tokens };
  } finally {
    await close();
  }
}
