import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { SubscriptionStatus } from '../../db/types.js';

export interface SubscriptionFilter {
  communityId?: string;
  tierId?: string;
  memberId?: string;
  status?: SubscriptionStatus;
}

/** The subscription mirror as a creator sees it: always scoped by creator_id. */
export function createSubscriptionsRepo(db: Executor) {
  const filtered = (trx: Executor, creatorId: string, f: SubscriptionFilter) => {
    let q = trx.selectFrom('subscriptions').where('creator_id', '=', creatorId);
    if (f.communityId) q = q.where('community_id', '=', f.communityId);
    if (f.tierId) q = q.where('tier_id', '=', f.tierId);
    if (f.memberId) q = q.where('member_id', '=', f.memberId);
    if (f.status) q = q.where('status', '=', f.status);
    return q;
  };

  return {
    async find(creatorId: string, id: string, trx: Executor = db) {
      return trx.selectFrom('subscriptions').selectAll().where('creator_id', '=', creatorId).where('id', '=', id).executeTakeFirst();
    },

    /** Newest first, ties by id. */
    async list(creatorId: string, f: SubscriptionFilter & { offset: number; limit: number }, trx: Executor = db) {
      return filtered(trx, creatorId, f).selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(f.offset).limit(f.limit).execute();
    },

    async count(creatorId: string, f: SubscriptionFilter, trx: Executor = db) {
      return (await filtered(trx, creatorId, f).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
    },

    async setCancellationReason(creatorId: string, id: string, reason: string, trx: Executor = db) {
      await trx.updateTable('subscriptions').set({ cancellation_reason: reason }).where('creator_id', '=', creatorId).where('id', '=', id).execute();
    },

    /** Live subscriptions of a community, for pausing (not yet set to cancel) or resuming (set by a pause). */
    async liveInCommunity(creatorId: string, communityId: string, which: 'to_pause' | 'to_resume', afterId: string | null, limit: number, trx: Executor = db) {
      let q = trx
        .selectFrom('subscriptions')
        .select(['id', 'processor_subscription_id'])
        .where('creator_id', '=', creatorId)
        .where('community_id', '=', communityId)
        .where('status', 'in', ['trialing', 'active', 'past_due']);
      q = which === 'to_pause' ? q.where('cancel_at_period_end', '=', false) : q.where('canceled_by_pause', '=', true).where('cancel_at_period_end', '=', true);
      if (afterId) q = q.where('id', '>', afterId);
      return q.orderBy('id').limit(limit).execute();
    },

    async markCanceledByPause(creatorId: string, id: string, value: boolean, trx: Executor = db) {
      await trx.updateTable('subscriptions').set({ canceled_by_pause: value }).where('creator_id', '=', creatorId).where('id', '=', id).execute();
    },

    async insertRefund(
      creatorId: string,
      row: { id: string; subscription_id: string; amount_cents: number; currency: string; status: string; processor_refund_id: string; processor_charge_id: string | null; created_at: Date },
      trx: Executor = db,
    ) {
      // The charge.refunded webhook may have mirrored it first; either way one row per refund.
      await trx.insertInto('refunds').values({ ...row, creator_id: creatorId }).onConflict((oc) => oc.column('processor_refund_id').doNothing()).execute();
      return trx.selectFrom('refunds').selectAll().where('creator_id', '=', creatorId).where('processor_refund_id', '=', row.processor_refund_id).executeTakeFirstOrThrow();
    },
  };
}

export type SubscriptionsRepo = ReturnType<typeof createSubscriptionsRepo>;
export type SubscriptionRow = NonNullable<Awaited<ReturnType<SubscriptionsRepo['find']>>>;
