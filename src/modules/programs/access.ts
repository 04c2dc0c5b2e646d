import type { Executor } from '../../db/tx.js';
import { LIVE_STATUSES } from '../subscriptions/status.js';

/** Subscription statuses that open a community's programs and logging (DESIGN §7: live; defined in subscriptions/status.ts). */
export { LIVE_STATUSES };

/** Whether the member holds a live subscription to the community (index subscriptions_member_live_idx). */
export async function hasLiveSubscription(trx: Executor, memberId: string, communityId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('subscriptions')
    .select('id')
    .where('member_id', '=', memberId)
    .where('community_id', '=', communityId)
    .where('status', 'in', LIVE_STATUSES)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
