import type { Executor } from '../../db/tx.js';
import { recordEvents, type NewEvent } from '../events/outbox.js';
import { previousAttributes } from '../events/previous.js';
import { presentSubscription } from './present.js';
import type { SubscriptionRow } from './subscriptions.repo.js';
import { isLive } from './status.js';

/**
 * The outgoing events of one change the mirror wrote (sync.ts `apply`, in its transaction, only
 * when a field the API shows changed): subscription.created / .updated, .canceled and .past_due
 * when the status became one of them, and member.joined / member.left when the member's access
 * to the community turned on or off. `before` is the row as it was, undefined for a new one.
 */
export async function recordSubscriptionEvents(trx: Executor, creatorId: string, before: SubscriptionRow | undefined, id: string): Promise<void> {
  const row = await trx.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const now = presentSubscription(row);
  const previous = before ? previousAttributes(presentSubscription(before), now) : {};
  const data = { ...now, previous_attributes: previous };
  const events: NewEvent[] = [{ type: before ? 'subscription.updated' : 'subscription.created', data }];
  if (now.status !== before?.status && now.status === 'canceled') events.push({ type: 'subscription.canceled', data });
  if (now.status !== before?.status && now.status === 'past_due') events.push({ type: 'subscription.past_due', data });

  // Access is per community: any live subscription of the member there. Read after the
  // directory refresh took the member's lock, so a concurrent change of another of their
  // subscriptions has committed and is seen.
  const others = await trx
    .selectFrom('subscriptions')
    .select('status')
    .where('creator_id', '=', creatorId)
    .where('member_id', '=', row.member_id)
    .where('community_id', '=', row.community_id)
    .where('id', '!=', id)
    .execute();
  const otherLive = others.some((o) => isLive(o.status));
  const wasLive = otherLive || (before !== undefined && before.community_id === row.community_id && isLive(before.status));
  const isLiveNow = otherLive || isLive(row.status);
  if (wasLive !== isLiveNow) {
    events.push({
      type: isLiveNow ? 'member.joined' : 'member.left',
      data: { member_id: row.member_id, community_id: row.community_id, subscription_id: id, tier_id: row.tier_id, status: row.status, at: new Date().toISOString() },
    });
  }
  await recordEvents(trx, creatorId, events);
}
