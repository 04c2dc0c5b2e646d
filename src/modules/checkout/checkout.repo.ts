import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { LIVE_STATUSES } from '../programs/access.js';
import { memberSubscriptionsOf } from '../member-billing/member-view.js';

/**
 * Member-side billing reads and writes: what a checkout needs to open, the processor customer
 * remembered per creator and member, and the member's own subscriptions. Keyed by the member
 * (a member is one person across creators); creator-scoped rows are matched by creator too.
 */
export function createCheckoutRepo(db: Executor) {
  return {
    /** The tier with what decides whether it can be bought: its community's status and its creator's account. */
    async tierForCheckout(tierId: string) {
      return db
        .selectFrom('tiers as t')
        .innerJoin('communities as c', 'c.id', 't.community_id')
        .innerJoin('creators as cr', 'cr.id', 't.creator_id')
        .select(['t.id', 't.creator_id', 't.community_id', 't.is_active', 't.trial_days', 't.processor_price_id', 'c.status as community_status', 'cr.processor_account_id'])
        .where('t.id', '=', tierId)
        .executeTakeFirst();
    },

    /**
     * The member's live subscription in a community, if any (one per member and community:
     * DESIGN §5). Through subscriptions_member_live_idx, whose predicate is the live statuses.
     */
    async liveSubscriptionIn(memberId: string, communityId: string) {
      return db
        .selectFrom('subscriptions')
        .select(['id', 'tier_id'])
        .where('member_id', '=', memberId)
        .where('community_id', '=', communityId)
        .where('status', 'in', [...LIVE_STATUSES])
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
    },

    async memberContact(memberId: string) {
      return db.selectFrom('members').select(['id', 'email', 'name']).where('id', '=', memberId).executeTakeFirstOrThrow();
    },

    async knownCustomer(creatorId: string, memberId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom('processor_customers')
        .select('processor_customer_id')
        .where('creator_id', '=', creatorId)
        .where('member_id', '=', memberId)
        .executeTakeFirst();
      return row?.processor_customer_id;
    },

    /** Remembers the member's customer on the creator's account; a concurrent request may have stored it first. */
    async rememberCustomer(creatorId: string, memberId: string, customerId: string): Promise<void> {
      await db
        .insertInto('processor_customers')
        .values({ creator_id: creatorId, member_id: memberId, processor_customer_id: customerId })
        .onConflict((oc) => oc.columns(['creator_id', 'member_id']).doNothing())
        .execute();
    },

    async insertSession(row: { id: string; creator_id: string; member_id: string; tier_id: string; processor_session_id: string; url: string }, trx: Executor = db) {
      return trx.insertInto('checkout_sessions').values(row).returningAll().executeTakeFirstOrThrow();
    },

    /** The member's other hosted sessions still open in a community (one live subscription per community). */
    async openSessionsIn(memberId: string, communityId: string) {
      return db
        .selectFrom('checkout_sessions as cs')
        .innerJoin('tiers as t', 't.id', 'cs.tier_id')
        .select(['cs.processor_session_id', 'cs.creator_id'])
        .where('cs.member_id', '=', memberId)
        .where('cs.status', '=', 'open')
        .where('t.community_id', '=', communityId)
        .execute();
    },

    /** A hosted session's status as the processor reports it. */
    async setSessionStatus(processorSessionId: string, status: 'open' | 'complete' | 'expired', trx: Executor = db) {
      await trx.updateTable('checkout_sessions').set({ status, updated_at: new Date() }).where('processor_session_id', '=', processorSessionId).execute();
    },

    /** The member's subscriptions across creators, newest first (ties by id), with community and tier names. */
    async memberSubscriptions(memberId: string, page: { offset: number; limit: number }) {
      return memberSubscriptionsOf(db, memberId).orderBy('s.created_at', 'desc').orderBy('s.id', 'desc').offset(page.offset).limit(page.limit).execute();
    },

    async countMemberSubscriptions(memberId: string): Promise<number> {
      const row = await db.selectFrom('subscriptions').select(sql<number>`count(*)::int`.as('n')).where('member_id', '=', memberId).executeTakeFirstOrThrow();
      return row.n;
    },
  };
}

export type CheckoutRepo = ReturnType<typeof createCheckoutRepo>;
