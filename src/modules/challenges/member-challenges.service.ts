import type { Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { inTransaction, type Executor, type StoredAnswer } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { ChallengeRow, ChallengesRepo } from './challenges.repo.js';
import type { MemberChallenge, MemberChallengesQuery } from './challenges.schemas.js';
import { board, presentRanking, publicFields, statusOf, tierVerdict } from './challenges.service.js';
import { rescore } from './scores.js';
import { recordEvents } from '../events/outbox.js';

export interface MemberChallengesDeps {
  db: Db;
  challenges: ChallengesRepo;
  /**
   * Takes the member's training-history lock inside `trx` (workout-logs/logging.repo.ts):
   * a join computes the member's score from their logs, so a log being written meanwhile
   * must either be seen or find its guard moved and retry.
   */
  lockHistory(memberId: string, trx: Executor): Promise<void>;
  now: () => Date;
}

const notYours = () => new AppError('forbidden', "This challenge belongs to a community you don't hold a live subscription to; subscribe to follow it.");

export type MemberChallengeView = Static<typeof MemberChallenge>;

/** The member app's side: what is open to join, joining and leaving, the board with your own row. */
export function createMemberChallengesService({ db, challenges, lockHistory, now }: MemberChallengesDeps) {
  /**
   * Per challenge: whether its community is open (not paused) and whether the member's live
   * tiers there meet its minimum in the tier order (with the tier to name in a 403).
   */
  async function verdicts(memberId: string, rows: ChallengeRow[], trx: Executor) {
    const byCreator = new Map<string, string[]>();
    for (const r of rows) byCreator.set(r.creator_id, [...(byCreator.get(r.creator_id) ?? []), r.community_id]);
    const communityIds = [...new Set(rows.map((r) => r.community_id))];
    const [tiers, held, paused] = await Promise.all([
      Promise.all([...byCreator].map(([creatorId, ids]) => challenges.tiersOf(creatorId, ids, trx))).then((t) => t.flat()),
      challenges.liveTiersOf(memberId, communityIds, trx),
      challenges.pausedAmong(communityIds, trx),
    ]);
    return new Map(
      rows.map((r) => [
        r.id,
        {
          communityOpen: !paused.has(r.community_id),
          ...tierVerdict(
            tiers.filter((t) => t.community_id === r.community_id),
            held.filter((h) => h.community_id === r.community_id).map((h) => h.tier_id),
            r.tier_min_id,
          ),
        },
      ]),
    );
  }

  async function view(memberId: string, rows: ChallengeRow[], trx: Executor = db) {
    const [standings, tiers] = await Promise.all([challenges.standings(memberId, rows.map((r) => r.id), trx), verdicts(memberId, rows, trx)]);
    return rows.map((c) => {
      const status = statusOf(c, now());
      const mine = standings.get(c.id);
      // The fields a creator sees too (challenges.service.ts), then the member's own.
      return {
        ...publicFields(c, now()),
        joined: mine !== undefined,
        can_join: (status === 'scheduled' || status === 'running') && tiers.get(c.id)!.communityOpen && tiers.get(c.id)!.ok,
        score: mine ? Number(mine.score) : null,
        rank: mine ? mine.rank : null,
      };
    });
  }

  async function existing(id: string) {
    const challenge = await challenges.findAny(id);
    if (!challenge) throw notFound('Challenge');
    return challenge;
  }

  /** The challenge, for a member who has to do with its community (challenges.repo isRelated); to anyone else it does not exist. */
  async function related(memberId: string, id: string) {
    const challenge = await existing(id);
    if (!(await challenges.isRelated(memberId, challenge))) throw notFound('Challenge');
    return challenge;
  }

  /** The challenge as it stands now (status and count move with joins). */
  const reloaded = async (memberId: string, id: string, trx: Executor) => (await view(memberId, [(await challenges.findAny(id, trx))!], trx))[0]!;

  function refuseUnlessOpen(challenge: ChallengeRow, doing: string) {
    const status = statusOf(challenge, now());
    if (status === 'canceled') throw new AppError('conflict', `The challenge was canceled; it no longer accepts ${doing}.`);
    if (status === 'finished') throw new AppError('conflict', `The challenge has finished; it no longer accepts ${doing}.`);
  }

  return {
    view,

    async list(memberId: string, query: MemberChallengesQuery) {
      const { rows, total } = await challenges.forMember(memberId, { communityId: query.community_id, now: now(), offset: offsetOf(query), limit: query.limit });
      return paginated(await view(memberId, rows), total, query);
    },

    /**
     * Joins while scheduled or running with a live subscription whose tier meets the minimum;
     * the score counts every log already in the window. Joining again changes nothing.
     */
    async join(memberId: string, id: string, answer?: StoredAnswer<MemberChallengeView>) {
      const challenge = await related(memberId, id);
      refuseUnlessOpen(challenge, 'new participants');
      // Already in: the same participation, whatever has changed about the member's tier since.
      if ((await challenges.standings(memberId, [id])).has(id)) return inTransaction(db, answer, (trx) => reloaded(memberId, id, trx));
      const verdict = (await verdicts(memberId, [challenge], db)).get(id)!;
      if (!verdict.communityOpen) throw new AppError('community_paused', "The challenge's community is paused and not taking part in challenges.");
      if (!verdict.ok) {
        throw new AppError(
          'forbidden',
          verdict.needed
            ? `Taking part needs a live subscription to the "${verdict.needed}" tier or a higher one in this community; upgrade to join.`
            : 'Taking part needs a live subscription to this community; subscribe to join.',
        );
      }
      return inTransaction(db, answer, async (trx) => {
        await lockHistory(memberId, trx);
        const joinedAt = now();
        if (await challenges.addParticipant(challenge.creator_id, id, memberId, joinedAt, trx)) {
          await rescore(trx, sql`p.challenge_id = ${id} and p.member_id = ${memberId}`);
          if (!(await challenges.countParticipant(id, 1, trx))) throw new AppError('conflict', 'The challenge was canceled; it no longer accepts new participants.');
          await recordEvents(trx, challenge.creator_id, [
            { type: 'challenge.joined', data: { challenge_id: id, community_id: challenge.community_id, member_id: memberId, joined_at: joinedAt.toISOString() } },
          ]);
        }
        return reloaded(memberId, id, trx);
      });
    },

    /** Leaves while scheduled or running (the score goes with the participation); leaving when not in it changes nothing. */
    async leave(memberId: string, id: string, answer?: StoredAnswer<MemberChallengeView>) {
      const challenge = await related(memberId, id);
      refuseUnlessOpen(challenge, 'changes to who takes part');
      return inTransaction(db, answer, async (trx) => {
        if (await challenges.removeParticipant(challenge.creator_id, id, memberId, trx)) await challenges.countParticipant(id, -1, trx);
        else if (!(await challenges.holdsLive(memberId, challenge, trx))) throw notYours();
        return reloaded(memberId, id, trx);
      });
    },

    /**
     * The creator's board, plus your own row wherever it falls: for members whose live tiers in
     * the community meet the challenge's minimum (any live tier when it has none). Others who
     * have to do with it (they take part, or hold or held a subscription there) get 403; anyone
     * else 404, which names nothing.
     */
    async leaderboard(memberId: string, id: string, query: PageQuery) {
      const challenge = await related(memberId, id);
      const verdict = (await verdicts(memberId, [challenge], db)).get(id)!;
      if (!verdict.ok) {
        throw new AppError(
          'forbidden',
          verdict.needed
            ? `The board is open to members with a live subscription to the "${verdict.needed}" tier or a higher one in this community.`
            : "The board is open to members with a live subscription to this community; subscribe to follow it.",
        );
      }
      const at = now();
      const [page, standings] = await Promise.all([board(challenges, challenge, query, at), challenges.standings(memberId, [id])]);
      const mine = standings.get(id);
      return { ...page, data: { ...page.data, me: mine ? presentRanking(mine) : null } };
    },
  };
}

export type MemberChallengesService = ReturnType<typeof createMemberChallengesService>;
