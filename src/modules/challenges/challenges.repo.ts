import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import { pageWindow } from '../../db/prepared.js';
import type { Executor } from '../../db/tx.js';
import type { ChallengesTable, Database } from '../../db/types.js';
import { LIVE_STATUSES } from '../programs/access.js';
import type { ChallengeStatus } from './challenges.schemas.js';

export type ChallengeRow = Selectable<ChallengesTable>;
export type ChallengeInsert = Pick<ChallengeRow, 'id' | 'community_id' | 'name' | 'description' | 'metric' | 'exercise_id' | 'duration_days' | 'starts_at' | 'ends_at' | 'tier_min_id'>;
export type ChallengeChanges = Partial<Omit<ChallengeInsert, 'id' | 'community_id'>>;

/** A participant's standing: score, when reached, and the rank at the end of the last ranked day. */
export interface StandingRow {
  member_id: string;
  name: string;
  score: string;
  rank: number;
  previous_rank: number | null;
}

/** The SQL condition of a derived status at `now` (challenges.service statusOf is the same rule). */
function statusIs(status: ChallengeStatus, now: Date) {
  return (eb: ExpressionBuilder<Database, 'challenges'>) => {
    if (status === 'canceled') return eb('challenges.canceled_at', 'is not', null);
    const live = eb('challenges.canceled_at', 'is', null);
    if (status === 'scheduled') return eb.and([live, eb('challenges.starts_at', '>', now)]);
    if (status === 'running') return eb.and([live, eb('challenges.starts_at', '<=', now), eb('challenges.ends_at', '>', now)]);
    return eb.and([live, eb('challenges.ends_at', '<=', now)]);
  };
}

/** The live statuses (DESIGN §7) as SQL literals, so a partial index on them stays usable. */
const LIVE = sql.join(LIVE_STATUSES.map((s) => sql.lit(s)));

/**
 * Rank of a participant `p` of challenge `c` in board order (score desc, reached_at,
 * member_id), as a lateral join `rk` (after `r`): the participants of the score bands above
 * p's (challenge_score_bands, migrations/0037, kept in the writers' transactions, so of the same
 * snapshot) plus those ahead of p inside its own band, counted on challenge_participants_board_idx
 * from the band's nearer end: the band's first rank + those ahead in it, or its last rank − those
 * behind in it. Which end is guessed from the rank at the end of the last ranked day (`r`; none:
 * the band's end, where new members start): a wrong guess walks more of one band, never gives a
 * wrong answer. A rank costs a few hundred band rows and at most one band, not half the board.
 */
const RANKED = sql`cross join lateral (
    select (1 + s.above + case when coalesce(r.rank, c.participants_count) - s.above <= s.mine / 2
      then (select count(*) from challenge_participants q where q.challenge_id = p.challenge_id and q.score > p.score and q.score < s.band_end)
         + (select count(*) from challenge_participants q where q.challenge_id = p.challenge_id and q.score = p.score
              and (q.reached_at, q.member_id) < (p.reached_at, p.member_id))
      else s.mine - 1
         - (select count(*) from challenge_participants q where q.challenge_id = p.challenge_id and q.score < p.score and q.score >= s.band)
         - (select count(*) from challenge_participants q where q.challenge_id = p.challenge_id and q.score = p.score
              and (q.reached_at, q.member_id) > (p.reached_at, p.member_id)) end)::int as rank
    from (select score_band(p.score) as band, score_band_end(score_band(p.score)) as band_end,
                 coalesce(sum(b.participants) filter (where b.band > score_band(p.score)), 0) as above,
                 coalesce(sum(b.participants) filter (where b.band = score_band(p.score)), 0) as mine
          from challenge_score_bands b
          where b.creator_id = p.creator_id and b.challenge_id = p.challenge_id and b.band >= score_band(p.score)) s
  ) rk`;

/** Challenges of one creator (every creator query scoped by creator_id), and their participants. */
export function createChallengesRepo(db: Executor) {
  const ofCreator = (trx: Executor, creatorId: string) => trx.selectFrom('challenges').selectAll('challenges').where('challenges.creator_id', '=', creatorId);
  const filtered = (trx: Executor, creatorId: string, f: { communityId?: string; status?: ChallengeStatus; now: Date }) => {
    let q = trx.selectFrom('challenges').where('creator_id', '=', creatorId);
    if (f.communityId) q = q.where('community_id', '=', f.communityId);
    if (f.status) q = q.where(statusIs(f.status, f.now));
    return q;
  };

  return {
    async find(creatorId: string, id: string, trx: Executor = db, opts: { lock?: boolean } = {}) {
      const q = ofCreator(trx, creatorId).where('id', '=', id);
      return (opts.lock ? q.forUpdate() : q).executeTakeFirst();
    },

    /** Any creator's challenge: the member side, which checks access itself. */
    async findAny(id: string, trx: Executor = db) {
      return trx.selectFrom('challenges').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Latest start first, ties by id. */
    async list(creatorId: string, f: { communityId?: string; status?: ChallengeStatus; now: Date; offset: number; limit: number }, trx: Executor = db) {
      return filtered(trx, creatorId, f).selectAll().orderBy('starts_at', 'desc').orderBy('id', 'desc').offset(f.offset).limit(f.limit).execute();
    },

    async count(creatorId: string, f: { communityId?: string; status?: ChallengeStatus; now: Date }, trx: Executor = db) {
      return (await filtered(trx, creatorId, f).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
    },

    async insert(creatorId: string, row: ChallengeInsert, trx: Executor) {
      await trx.insertInto('challenges').values({ ...row, creator_id: creatorId }).execute();
    },

    async update(creatorId: string, id: string, changes: ChallengeChanges & { canceled_at?: Date }, trx: Executor) {
      await trx.updateTable('challenges').set({ ...changes, updated_at: sql`now()` }).where('creator_id', '=', creatorId).where('id', '=', id).execute();
    },

    /** Tiers of a community in the shape the tier order ranks (tiers/tier-order.ts). */
    async tiersOf(creatorId: string, communityIds: string[], trx: Executor = db) {
      if (communityIds.length === 0) return [];
      return trx
        .selectFrom('tiers')
        .select(['id', 'community_id', 'name', 'price_cents', 'billing_period', 'level', 'created_at', 'is_active'])
        .where('creator_id', '=', creatorId)
        .where('community_id', 'in', communityIds)
        .execute();
    },

    /** Which of these communities are paused. */
    async pausedAmong(communityIds: string[], trx: Executor = db) {
      if (communityIds.length === 0) return new Set<string>();
      const rows = await trx.selectFrom('communities').select('id').where('id', 'in', communityIds).where('status', '=', 'paused').execute();
      return new Set(rows.map((r) => r.id));
    },

    /** Tiers of the member's live subscriptions in these communities. */
    async liveTiersOf(memberId: string, communityIds: string[], trx: Executor = db) {
      if (communityIds.length === 0) return [];
      return trx
        .selectFrom('subscriptions')
        .select(['community_id', 'tier_id'])
        .where('member_id', '=', memberId)
        .where('community_id', 'in', communityIds)
        .where('status', 'in', LIVE_STATUSES)
        .execute();
    },

    /** Adds the member (score 0 until rescored); false if they already take part. */
    async addParticipant(creatorId: string, challengeId: string, memberId: string, joinedAt: Date, trx: Executor) {
      const row = await trx
        .insertInto('challenge_participants')
        .values({ creator_id: creatorId, challenge_id: challengeId, member_id: memberId, joined_at: joinedAt, reached_at: joinedAt })
        .onConflict((oc) => oc.columns(['member_id', 'challenge_id']).doNothing())
        .returning('member_id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async removeParticipant(creatorId: string, challengeId: string, memberId: string, trx: Executor) {
      const row = await trx
        .deleteFrom('challenge_participants')
        .where('member_id', '=', memberId)
        .where('challenge_id', '=', challengeId)
        .where('creator_id', '=', creatorId)
        .returning('member_id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Moves participants_count; a join (+1) finds nothing when the challenge was canceled meanwhile (false: the caller rolls back). */
    async countParticipant(challengeId: string, by: 1 | -1, trx: Executor) {
      let q = trx.updateTable('challenges').set({ participants_count: sql`participants_count + ${by}` }).where('id', '=', challengeId);
      if (by > 0) q = q.where('canceled_at', 'is', null);
      return (await q.returning('id').executeTakeFirst()) !== undefined;
    },

    /** One page of the board in rank order, with names and the last ranked day's ranks (index-only walk of the board index). */
    async board(challengeId: string, page: { offset: number; limit: number }, trx: Executor = db): Promise<StandingRow[]> {
      const { rows } = await sql<StandingRow>`/*prepare:challenge_board*/
        select p.member_id, m.name, p.score, (${page.offset} + row_number() over (order by p.score desc, p.reached_at, p.member_id))::int as rank, r.rank as previous_rank
        from (select member_id, challenge_id, score, reached_at from challenge_participants
              where challenge_id = ${challengeId}
              order by score desc, reached_at, member_id ${pageWindow(page.offset, page.limit)}) p
        join members m on m.id = p.member_id
        left join challenge_day_ranks r on r.challenge_id = p.challenge_id and r.member_id = p.member_id
        order by p.score desc, p.reached_at, p.member_id`.execute(trx);
      return rows;
    },

    /** The member's standings in these challenges (none for a challenge they do not take part in). */
    async standings(memberId: string, challengeIds: string[], trx: Executor = db) {
      if (challengeIds.length === 0) return new Map<string, StandingRow & { joined_at: Date }>();
      // Prepared (db/prepared.ts): planning the rank's subqueries cost more than running them.
      const { rows } = await sql<StandingRow & { challenge_id: string; joined_at: Date }>`/*prepare:challenge_standings*/
        select p.challenge_id, p.member_id, m.name, p.score, p.joined_at, rk.rank, r.rank as previous_rank
        from challenge_participants p
        join challenges c on c.id = p.challenge_id
        join members m on m.id = p.member_id
        left join challenge_day_ranks r on r.challenge_id = p.challenge_id and r.member_id = p.member_id
        ${RANKED}
        where p.member_id = ${memberId} and p.challenge_id = any(${challengeIds}::uuid[])`.execute(trx);
      return new Map(rows.map((r) => [r.challenge_id, r]));
    },

    /** Challenges the member takes part in within one creator's communities (the member record). */
    async participationsOf(creatorId: string, memberId: string, trx: Executor = db) {
      const { rows } = await sql<ChallengeRow & { score: string; rank: number; joined_at: Date }>`
        select c.*, p.score, p.joined_at, rk.rank
        from challenge_participants p join challenges c on c.id = p.challenge_id
        left join challenge_day_ranks r on r.challenge_id = p.challenge_id and r.member_id = p.member_id
        ${RANKED}
        where p.member_id = ${memberId} and p.creator_id = ${creatorId}
        order by c.starts_at desc, c.id desc`.execute(trx);
      return rows;
    },

    /**
     * What a member sees: challenges they take part in, and the live (scheduled or running)
     * ones of communities they hold a live subscription to. Latest start first.
     */
    async forMember(memberId: string, f: { communityId?: string; now: Date; offset: number; limit: number }, trx: Executor = db) {
      const visible = sql`(exists (select 1 from challenge_participants p where p.member_id = ${memberId} and p.challenge_id = c.id)
        or (c.canceled_at is null and c.ends_at > ${f.now} and c.community_id in (
          select s.community_id from subscriptions s where s.member_id = ${memberId} and s.status in (${LIVE}))))
        and (${f.communityId ?? null}::uuid is null or c.community_id = ${f.communityId ?? null}::uuid)`;
      const [{ rows }, { rows: counted }] = await Promise.all([
        sql<ChallengeRow>`select c.* from challenges c where ${visible} order by c.starts_at desc, c.id desc offset ${f.offset} limit ${f.limit}`.execute(trx),
        sql<{ n: number }>`select count(*)::int as n from challenges c where ${visible}`.execute(trx),
      ]);
      return { rows, total: counted[0]!.n };
    },

    /** Whether the member holds a live subscription to the challenge's community. */
    async holdsLive(memberId: string, challenge: Pick<ChallengeRow, 'community_id'>, trx: Executor = db) {
      const { rows } = await sql<{ ok: boolean }>`select exists (select 1 from subscriptions
        where member_id = ${memberId} and community_id = ${challenge.community_id} and status in (${LIVE})) as ok`.execute(trx);
      return rows[0]!.ok;
    },

    /**
     * Whether the member has anything to do with the challenge: they take part, or hold or held
     * a subscription to its community, in any status. Anyone else is told it does not exist.
     */
    async isRelated(memberId: string, challenge: Pick<ChallengeRow, 'id' | 'community_id'>, trx: Executor = db) {
      const { rows } = await sql<{ ok: boolean }>`select exists (select 1 from challenge_participants where member_id = ${memberId} and challenge_id = ${challenge.id})
        or exists (select 1 from subscriptions where member_id = ${memberId} and community_id = ${challenge.community_id}) as ok`.execute(trx);
      return rows[0]!.ok;
    },
  };
}

export type ChallengesRepo = ReturnType<typeof createChallengesRepo>;
