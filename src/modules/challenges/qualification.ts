import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { holdsAtLeast } from '../tiers/tier-order.js';
import { lockHistory } from '../workout-logs/logging.repo.js';
import { createChallengesRepo } from './challenges.repo.js';
import { rescore } from './scores.js';

/**
 * Keeps a member's challenge participations in step with their subscriptions: the mirror
 * calls this in the transaction that changes one of them (subscriptions/sync.ts). In each
 * challenge of the creator that is neither canceled nor finished, a participant whose live
 * tiers in its community no longer meet its minimum — the subscription ended, stopped being
 * live (unpaid, paused, …) or moved to a tier below `tier_min_id` — stops scoring at `at`
 * (challenge_participants.scoring_stopped_at: logs written from then on count nowhere, the
 * score stays on the board as it stood). One who qualifies again scores again, from every log
 * in the window, as at a join. Answers how many participations changed.
 */
export async function requalifyParticipations(creatorId: string, memberId: string, at: Date, trx: Executor): Promise<number> {
  const rows = await trx
    .selectFrom('challenge_participants as p')
    .innerJoin('challenges as c', 'c.id', 'p.challenge_id')
    .selectAll('c')
    .select('p.scoring_stopped_at')
    .where('p.member_id', '=', memberId)
    .where('p.creator_id', '=', creatorId)
    .where('c.canceled_at', 'is', null)
    .where('c.ends_at', '>', at)
    .execute();
  if (rows.length === 0) return 0;
  const repo = createChallengesRepo(trx);
  const communityIds = [...new Set(rows.map((r) => r.community_id))];
  const [tiers, held] = await Promise.all([repo.tiersOf(creatorId, communityIds, trx), repo.liveTiersOf(memberId, communityIds, trx)]);
  // The join's rule (tier-order holdsAtLeast, as challenges.service tierVerdict): a live tier there that meets the minimum.
  const qualifies = (r: (typeof rows)[number]) =>
    holdsAtLeast(
      tiers.filter((t) => t.community_id === r.community_id),
      held.filter((h) => h.community_id === r.community_id).map((h) => h.tier_id),
      r.tier_min_id,
    );
  const stop: string[] = [];
  const resume: string[] = [];
  for (const r of rows) {
    const ok = qualifies(r);
    if (r.scoring_stopped_at === null && !ok) stop.push(r.id);
    else if (r.scoring_stopped_at !== null && ok) resume.push(r.id);
  }
  const markStopped = (challengeIds: string[], stoppedAt: Date | null) =>
    trx.updateTable('challenge_participants').set({ scoring_stopped_at: stoppedAt }).where('member_id', '=', memberId).where('challenge_id', 'in', challengeIds).execute();
  if (stop.length > 0) await markStopped(stop, at);
  if (resume.length > 0) {
    // A rescore replays the member's logs: under their history lock, as a join's does.
    await lockHistory(memberId, trx);
    await markStopped(resume, null);
    await rescore(trx, sql`p.member_id = ${memberId} and p.challenge_id = any(${resume}::uuid[])`);
  }
  return stop.length + resume.length;
}
