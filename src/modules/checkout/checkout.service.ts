import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import type { Processor } from '../../processor/processor.js';

export interface CheckoutSession {
  id: string;
  url: string;
  processor_session_id: string;
  tier_id: string;
  status: 'open' | 'complete' | 'expired';
  created_at: string;
}

export interface CheckoutDeps {
  db: Db;
  processor: Processor;
  successUrl: string;
  cancelUrl: string;
}

/**
 * Hosted checkout for a member. The subscription itself appears only when the processor
 * reports the paid session (checkout.session.completed), never here.
 */
export function createCheckoutService({ db, processor, successUrl, cancelUrl }: CheckoutDeps) {
  const knownCustomer = async (creatorId: string, memberId: string) =>
    (
      await db
        .selectFrom('processor_customers')
        .select('processor_customer_id')
        .where('creator_id', '=', creatorId)
        .where('member_id', '=', memberId)
        .executeTakeFirst()
    )?.processor_customer_id;

  /** The member's customer on the creator's account, created once and remembered. */
  async function customerFor(creatorId: string, account: string, member: { id: string; email: string; name: string }) {
    const known = await knownCustomer(creatorId, member.id);
    if (known) return known;
    const created = await processor.createCustomer(account, { creatorId, memberId: member.id, email: member.email, name: member.name });
    await db
      .insertInto('processor_customers')
      .values({ creator_id: creatorId, member_id: member.id, processor_customer_id: created })
      .onConflict((oc) => oc.columns(['creator_id', 'member_id']).doNothing())
      .execute();
    // A concurrent request may have won the insert; the customer is the same either way
    // (the processor call is idempotent per creator and member), so read back the stored one.
    return (await knownCustomer(creatorId, member.id)) ?? created;
  }

  return {
    /**
     * With an Idempotency-Key the session's id and the processor's key derive from it: a
     * retry after any failure gets the session the first attempt opened, never a second one.
     */
    async open(memberId: string, tierId: string, answer?: KeyedAnswer<CheckoutSession>) {
      const tier = await db
        .selectFrom('tiers as t')
        .innerJoin('communities as c', 'c.id', 't.community_id')
        .innerJoin('creators as cr', 'cr.id', 't.creator_id')
        .select(['t.id', 't.creator_id', 't.community_id', 't.is_active', 't.trial_days', 't.processor_price_id', 'c.status as community_status', 'cr.processor_account_id'])
        .where('t.id', '=', tierId)
        .executeTakeFirst();
      if (!tier) throw notFound('Tier');
      if (tier.community_status !== 'active') throw new AppError('community_paused', 'This community is paused and is not taking new members.');
      if (!tier.is_active || !tier.processor_price_id || !tier.processor_account_id) {
        throw new AppError('tier_inactive', 'This tier is not accepting new subscriptions.');
      }
      const live = await db
        .selectFrom('subscriptions')
        .select('id')
        .where('creator_id', '=', tier.creator_id)
        .where('member_id', '=', memberId)
        .where('tier_id', '=', tierId)
        .where('status', 'in', ['trialing', 'active', 'past_due'])
        .executeTakeFirst();
      if (live) throw new AppError('already_subscribed', 'You already hold a live subscription to this tier.');
      const member = await db.selectFrom('members').select(['id', 'email', 'name']).where('id', '=', memberId).executeTakeFirstOrThrow();

      const customer = await customerFor(tier.creator_id, tier.processor_account_id, member);
      const id = answer?.idFor('checkout') ?? newId();
      const session = await processor.createCheckoutSession(tier.processor_account_id, {
        customer,
        priceId: tier.processor_price_id,
        trialDays: tier.trial_days,
        metadata: { creator_id: tier.creator_id, community_id: tier.community_id, tier_id: tier.id, member_id: memberId, checkout_id: id },
        successUrl,
        cancelUrl,
        idempotencyKey: answer?.processorKey('checkout') ?? `checkout-${id}`,
      });
      return inTransaction(db, answer, async (trx): Promise<CheckoutSession> => {
        const row = await trx
          .insertInto('checkout_sessions')
          .values({ id, creator_id: tier.creator_id, member_id: memberId, tier_id: tier.id, processor_session_id: session.id, url: session.url ?? '' })
          .returningAll()
          .executeTakeFirstOrThrow();
        return { id: row.id, url: row.url, processor_session_id: row.processor_session_id, tier_id: row.tier_id, status: row.status, created_at: iso(row.created_at) };
      });
    },
  };
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;
