import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { memberSubscriptionsOf } from './member-view.js';

/**
 * Reads and writes of a member's own billing. Keyed by the member first (a member is one
 * person across creators): every row is matched by member_id, so another member's
 * subscription or payment is never found.
 */
export function createMemberBillingRepo(db: Executor) {
  return {
    /** One of the member's subscriptions, as the member sees it (member-view.ts). */
    async subscriptionView(memberId: string, id: string, trx: Executor = db) {
      return memberSubscriptionsOf(trx, memberId).where('s.id', '=', id).executeTakeFirst();
    },

    /** What cancel and resume decide on: the subscription's state, its community's, and the creator's account. */
    async forChange(memberId: string, id: string) {
      return db
        .selectFrom('subscriptions as s')
        .innerJoin('communities as c', 'c.id', 's.community_id')
        .innerJoin('creators as cr', 'cr.id', 's.creator_id')
        .select([
          's.id', 's.creator_id', 's.status', 's.cancel_at_period_end', 's.canceled_by_creator', 's.canceled_by_pause', 's.processor_subscription_id',
          'c.status as community_status', 'cr.processor_account_id',
        ])
        .where('s.member_id', '=', memberId)
        .where('s.id', '=', id)
        .executeTakeFirst();
    },

    /**
     * The member decided, after a pause set it: a resume of the community must not lift it
     * (convergePause lifts only what a pause marked), nor, after a member's resume, set it back.
     */
    async unmarkCanceledByPause(memberId: string, id: string, trx: Executor) {
      await trx.updateTable('subscriptions').set({ canceled_by_pause: false }).where('member_id', '=', memberId).where('id', '=', id).execute();
    },

    /**
     * What opening the billing portal needs, when the member has (had) a subscription in the
     * community: the creator's account, its portal configuration and the member's customer there.
     */
    async portalTarget(memberId: string, communityId: string) {
      return db
        .selectFrom('communities as c')
        .innerJoin('creators as cr', 'cr.id', 'c.creator_id')
        .innerJoin('processor_customers as pc', (j) => j.onRef('pc.creator_id', '=', 'c.creator_id').on('pc.member_id', '=', memberId))
        .select(['c.creator_id', 'cr.name as creator_name', 'cr.processor_account_id', 'cr.billing_portal_configuration_id', 'pc.processor_customer_id'])
        .where('c.id', '=', communityId)
        .where(({ exists, selectFrom }) =>
          exists(selectFrom('subscriptions as s').select('s.id').where('s.member_id', '=', memberId).whereRef('s.community_id', '=', 'c.id')),
        )
        .executeTakeFirst();
    },

    /** Keeps the first configuration stored (two first visits at once made the same one: the processor call is keyed). */
    async keepPortalConfiguration(creatorId: string, configurationId: string) {
      await db
        .updateTable('creators')
        .set({ billing_portal_configuration_id: configurationId })
        .where('id', '=', creatorId)
        .where('billing_portal_configuration_id', 'is', null)
        .execute();
    },

    /**
     * The member's payments across creators, newest first (ties by id): the member's
     * subscriptions (subscriptions_member_created_idx), then each one's payments
     * (payments_subscription_idx, which leads with the creator).
     */
    async payments(memberId: string, page: { offset: number; limit: number }) {
      return db
        .selectFrom('subscriptions as s')
        .innerJoin('payments as p', (j) => j.onRef('p.creator_id', '=', 's.creator_id').onRef('p.subscription_id', '=', 's.id'))
        // The tier the payment paid for; the subscription's for payments mirrored before it was kept.
        .innerJoin('tiers as t', (j) => j.on((eb) => eb('t.id', '=', eb.fn.coalesce('p.tier_id', 's.tier_id'))))
        .innerJoin('communities as c', 'c.id', 's.community_id')
        .select([
          'p.id', 'p.subscription_id', 's.community_id', 'c.name as community_name', 't.id as tier_id', 't.name as tier_name',
          'p.amount_cents', 'p.currency', 'p.paid_at', 'p.processor_payment_intent_id',
        ])
        .where('s.member_id', '=', memberId)
        .orderBy('p.paid_at', 'desc')
        .orderBy('p.id', 'desc')
        .offset(page.offset)
        .limit(page.limit)
        .execute();
    },

    async countPayments(memberId: string): Promise<number> {
      const row = await db
        .selectFrom('subscriptions as s')
        .innerJoin('payments as p', (j) => j.onRef('p.creator_id', '=', 's.creator_id').onRef('p.subscription_id', '=', 's.id'))
        .select(sql<number>`count(*)::int`.as('n'))
        .where('s.member_id', '=', memberId)
        .executeTakeFirstOrThrow();
      return row.n;
    },

    /** The refunds of these payment intents (refunds_payment_intent_idx), oldest first. */
    async refundsOf(paymentIntents: string[]) {
      if (paymentIntents.length === 0) return [];
      return db
        .selectFrom('refunds')
        .select(['processor_payment_intent_id', 'amount_cents', 'status', 'created_at'])
        .where('processor_payment_intent_id', 'in', paymentIntents)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    },
  };
}

export type MemberBillingRepo = ReturnType<typeof createMemberBillingRepo>;
