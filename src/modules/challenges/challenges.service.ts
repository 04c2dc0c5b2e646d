import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, isoOrNull, type Executor, type StoredAnswer } from '../../db/tx.js';
import { instantInRange, LATEST_DAY } from '../../http/dates.js';
import { AppError, notFound, type ErrorDetail } from '../../http/errors.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { CommunitiesRepo } from '../communities/communities.repo.js';
import type { ExercisesRepo } from '../exercises/exercises.repo.js';
import { abbreviate } from '../members/names.js';
import { holdsAtLeast, type RankableTier } from '../tiers/tier-order.js';
import type { ChallengeChanges, ChallengeRow, ChallengesRepo, StandingRow } from './challenges.repo.js';
import { DURATION, type ChallengeStatus, type CreateChallengeBody, type ListChallengesQuery, type UpdateChallengeBody } from './challenges.schemas.js';
import { rescore } from './scores.js';

const DAY_MS = 86_400_000;

/** Settings that change what a log scores; changing one rescores the participants. */
const RESCORING = ['starts_at', 'duration_days', 'metric', 'exercise_id'] as const;

export function statusOf(c: Pick<ChallengeRow, 'canceled_at' | 'starts_at' | 'ends_at'>, now: Date): ChallengeStatus {
  if (c.canceled_at) return 'canceled';
  if (now < c.starts_at) return 'scheduled';
  return now < c.ends_at ? 'running' : 'finished';
}

const warningsOf = (c: Pick<ChallengeRow, 'duration_days'>) =>
  c.duration_days < DURATION.recommendedMin || c.duration_days > DURATION.recommendedMax
    ? [{ field: 'duration_days', message: `${c.duration_days} days is outside the recommended ${DURATION.recommendedMin} to ${DURATION.recommendedMax}; shorter challenges rarely build a habit, longer ones lose people.` }]
    : [];

/** The challenge as both a creator and a member see it. */
export const publicFields = (c: ChallengeRow, now: Date) => ({
  id: c.id,
  community_id: c.community_id,
  name: c.name,
  description: c.description,
  metric: c.metric,
  exercise_id: c.exercise_id,
  duration_days: c.duration_days,
  starts_at: iso(c.starts_at),
  ends_at: iso(c.ends_at),
  tier_min_id: c.tier_min_id,
  status: statusOf(c, now),
  participants_count: c.participants_count,
});

export const presentRanking = (r: Pick<StandingRow, 'rank' | 'member_id' | 'name' | 'score' | 'previous_rank'>) => {
  const moved = r.previous_rank === null ? 0 : r.previous_rank - r.rank;
  return { rank: r.rank, member_id: r.member_id, name: abbreviate(r.name), score: Number(r.score), delta: `${moved < 0 ? '-' : '+'}${Math.abs(moved)}` };
};

const endOf = (startsAt: Date, durationDays: number) => new Date(startsAt.getTime() + durationDays * DAY_MS);

/** A window must end within the dates the databases read back exactly (http/dates.ts), as its start must. */
function refuseEndPastRange(endsAt: Date) {
  if (instantInRange(endsAt.getTime())) return;
  throw new AppError('validation_error', `The challenge would end after ${LATEST_DAY}.`, [
    { field: 'starts_at', message: `with duration_days, must end by ${LATEST_DAY}: start earlier or make it shorter` },
  ]);
}

export interface ChallengesDeps {
  db: Db;
  challenges: ChallengesRepo;
  communities: CommunitiesRepo;
  exercises: ExercisesRepo;
  now: () => Date;
}

/** The creator's side of challenges: settings, status, cancel, the board. */
export function createChallengesService({ db, challenges, communities, exercises, now }: ChallengesDeps) {
  const present = (c: ChallengeRow) => ({
    ...publicFields(c, now()),
    canceled_at: isoOrNull(c.canceled_at),
    warnings: warningsOf(c),
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  });

  async function load(creatorId: string, id: string, trx: Executor = db, opts: { lock?: boolean } = {}) {
    const row = await challenges.find(creatorId, id, trx, opts);
    if (!row) throw notFound('Challenge');
    return row;
  }

  /** The metric/exercise pairing, the exercise and the minimum tier, all problems at once (400), then an inactive tier (409). */
  async function checkSettings(creatorId: string, communityId: string, s: Pick<ChallengeRow, 'metric' | 'exercise_id' | 'tier_min_id'>, trx: Executor) {
    const problems: ErrorDetail[] = [];
    if (s.metric === 'workouts_with_exercise' && !s.exercise_id) problems.push({ field: 'exercise_id', message: 'is required with the metric workouts_with_exercise' });
    if (s.metric !== 'workouts_with_exercise' && s.exercise_id) problems.push({ field: 'exercise_id', message: 'is only allowed with the metric workouts_with_exercise' });
    if (s.exercise_id && !(await exercises.visibleIds({ creatorId }, [s.exercise_id], trx)).has(s.exercise_id)) {
      problems.push({ field: 'exercise_id', message: 'is not a catalog exercise nor one of yours' });
    }
    const tier = s.tier_min_id ? (await challenges.tiersOf(creatorId, [communityId], trx)).find((t) => t.id === s.tier_min_id) : undefined;
    if (s.tier_min_id && !tier) problems.push({ field: 'tier_min_id', message: "is not a tier of the challenge's community" });
    if (problems.length) throw new AppError('validation_error', 'The challenge settings are not valid.', problems);
    if (tier && !tier.is_active) throw new AppError('tier_inactive', `The tier "${tier.name}" is deactivated; choose an active tier as the minimum, or reactivate it.`);
  }

  async function openCommunity(creatorId: string, communityId: string, trx: Executor) {
    const community = await communities.findStatus(creatorId, communityId, trx);
    if (!community) throw notFound('Community');
    if (community.status !== 'active') throw new AppError('community_paused', 'The community is paused; resume it (POST /communities/{id}/resume) before starting a challenge in it.');
  }

  return {
    present,

    async create(creatorId: string, input: CreateChallengeBody, answer?: StoredAnswer<ReturnType<typeof present>>) {
      const startsAt = new Date(input.starts_at);
      const row = {
        id: newId(),
        community_id: input.community_id,
        name: input.name.trim(),
        description: input.description ?? '',
        metric: input.metric,
        exercise_id: input.exercise_id ?? null,
        duration_days: input.duration_days,
        starts_at: startsAt,
        ends_at: endOf(startsAt, input.duration_days),
        tier_min_id: input.tier_min_id ?? null,
      };
      refuseEndPastRange(row.ends_at);
      return inTransaction(db, answer, async (trx) => {
        await openCommunity(creatorId, input.community_id, trx);
        await checkSettings(creatorId, input.community_id, row, trx);
        await challenges.insert(creatorId, row, trx);
        return present(await load(creatorId, row.id, trx));
      });
    },

    async list(creatorId: string, query: ListChallengesQuery) {
      if (query.community_id && !(await communities.findStatus(creatorId, query.community_id))) throw notFound('Community');
      const filter = { communityId: query.community_id, status: query.status, now: now() };
      const [rows, total] = await Promise.all([challenges.list(creatorId, { ...filter, offset: offsetOf(query), limit: query.limit }), challenges.count(creatorId, filter)]);
      return paginated(rows.map(present), total, query);
    },

    async get(creatorId: string, id: string) {
      return present(await load(creatorId, id));
    },

    /**
     * Name and description always; what decides the scores (dates, metric, exercise, tier)
     * only while scheduled, and then the participants are rescored in the same transaction.
     */
    async update(creatorId: string, id: string, input: UpdateChallengeBody) {
      return db.transaction().execute(async (trx) => {
        const current = await load(creatorId, id, trx, { lock: true });
        const { name, description, ...scoring } = input;
        const changes: ChallengeChanges = {
          ...(name !== undefined ? { name: name.trim() } : {}),
          ...(description !== undefined ? { description } : {}),
        };
        if (Object.keys(scoring).length) {
          const status = statusOf(current, now());
          if (status !== 'scheduled') throw new AppError('conflict', `The challenge is ${status}: its dates, metric, exercise and minimum tier can only change before it starts.`);
          const startsAt = scoring.starts_at !== undefined ? new Date(scoring.starts_at) : current.starts_at;
          if (scoring.starts_at !== undefined && startsAt < now()) {
            throw new AppError('validation_error', 'The challenge settings are not valid.', [{ field: 'starts_at', message: 'must not be in the past' }]);
          }
          const metric = scoring.metric ?? current.metric;
          // Leaving workouts_with_exercise drops the exercise unless one is sent (which checkSettings refuses).
          const exerciseId = scoring.exercise_id !== undefined ? scoring.exercise_id : metric === 'workouts_with_exercise' ? current.exercise_id : null;
          const tierMinId = scoring.tier_min_id !== undefined ? scoring.tier_min_id : current.tier_min_id;
          await checkSettings(creatorId, current.community_id, { metric, exercise_id: exerciseId, tier_min_id: tierMinId }, trx);
          const durationDays = scoring.duration_days ?? current.duration_days;
          refuseEndPastRange(endOf(startsAt, durationDays));
          Object.assign(changes, { starts_at: startsAt, duration_days: durationDays, ends_at: endOf(startsAt, durationDays), metric, exercise_id: exerciseId, tier_min_id: tierMinId });
        }
        if (Object.keys(changes).length) await challenges.update(creatorId, id, changes, trx);
        // Only a scheduled challenge gets here, so this is at most the logs dated in its future window.
        if (RESCORING.some((k) => k in scoring)) await rescore(trx, sql`p.challenge_id = ${id}`);
        return present(await load(creatorId, id, trx));
      });
    },

    /** Stops joins and freezes the scores; canceling twice answers the canceled challenge. */
    async cancel(creatorId: string, id: string, answer?: StoredAnswer<ReturnType<typeof present>>) {
      return inTransaction(db, answer, async (trx) => {
        const current = await load(creatorId, id, trx, { lock: true });
        if (!current.canceled_at) {
          if (statusOf(current, now()) === 'finished') throw new AppError('conflict', 'The challenge has finished, so it cannot be canceled; its board stays as it is.');
          await challenges.update(creatorId, id, { canceled_at: now() }, trx);
        }
        return present(await load(creatorId, id, trx));
      });
    },

    async leaderboard(creatorId: string, id: string, query: PageQuery) {
      const challenge = await load(creatorId, id);
      return board(challenges, challenge, query, now());
    },

    /** The member record's `challenges` (memberships/record.service.ts). */
    async participationsOf(creatorId: string, memberId: string) {
      const rows = await challenges.participationsOf(creatorId, memberId);
      return rows.map((r) => ({ challenge_id: r.id, name: r.name, status: statusOf(r, now()), score: Number(r.score), rank: r.rank, joined_at: iso(r.joined_at) }));
    },
  };
}

/** One page of a challenge's board in the spec's shape, with `pagination` over the participants. */
export async function board(challenges: ChallengesRepo, challenge: ChallengeRow, query: PageQuery, at: Date) {
  const rows = await challenges.board(challenge.id, { offset: offsetOf(query), limit: query.limit });
  const { data: rankings, pagination } = paginated(rows.map(presentRanking), challenge.participants_count, query);
  return { success: true as const, data: { challenge_id: challenge.id, updated_at: iso(at), rankings }, pagination };
}

/** Whether holding one of `heldTierIds` meets the challenge's minimum, and the tier name to ask for when not. */
export function tierVerdict(tiers: Array<RankableTier & { name: string }>, heldTierIds: string[], minimumTierId: string | null) {
  const ok = holdsAtLeast(tiers, heldTierIds, minimumTierId);
  return { ok, needed: minimumTierId ? (tiers.find((t) => t.id === minimumTierId)?.name ?? null) : null };
}

export type ChallengesService = ReturnType<typeof createChallengesService>;
