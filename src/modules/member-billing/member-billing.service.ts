import type { Db } from '../../db/client.js';
import { inTransaction, iso } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { Processor } from '../../processor/processor.js';
import type { SubscriptionSync } from '../subscriptions/sync.js';
import type { MemberBillingRepo } from './member-billing.repo.js';
import { presentMemberSubscription, type MemberSubscriptionView } from './member-view.js';
import type { BillingPortalLink, MemberPayment } from './member-billing.schemas.js';

/** Refunds that give money back, or will: Stripe counts pending ones in a charge's amount_refunded too. */
const COUNTS = (status: string) => status !== 'failed' && status !== 'canceled';

/** Most refunds listed per payment (the schema's bound); refunded_cents counts them all. */
const REFUNDS_SHOWN = 100;

export interface MemberBillingDeps {
  db: Db;
  billing: MemberBillingRepo;
  processor: Processor;
  sync: SubscriptionSync;
  /** Where the billing portal sends the member back (BILLING_PORTAL_RETURN_URL). */
  portalReturnUrl: string;
}

/**
 * A member's own billing: cancel and resume at period end, the processor's billing portal,
 * and the payments list. Changes go to the processor first and the mirror takes its answer.
 */
export function createMemberBillingService({ db, billing, processor, sync, portalReturnUrl }: MemberBillingDeps) {
  async function view(memberId: string, id: string, trx?: Parameters<MemberBillingRepo['subscriptionView']>[2]) {
    const row = await billing.subscriptionView(memberId, id, trx);
    if (!row) throw notFound('Subscription');
    return presentMemberSubscription(row);
  }

  /**
   * Sets or lifts cancel-at-period-end for the member. Asking for what already holds answers
   * the subscription unchanged, without a processor call. With an Idempotency-Key the
   * processor's key derives from it: a retry gets the processor's first answer, re-read.
   */
  async function setCancel(memberId: string, id: string, cancel: boolean, answer?: KeyedAnswer<MemberSubscriptionView>) {
    const sub = await billing.forChange(memberId, id);
    if (!sub) throw notFound('Subscription');
    if (sub.status === 'canceled') throw new AppError('subscription_canceled', 'The subscription is already canceled.');
    if (sub.status === 'incomplete_expired') throw new AppError('subscription_canceled', 'The subscription has ended: its first payment never succeeded.');
    // A creator's cancel wins over the member's resume, as over a community's (migrations/0011).
    if (!cancel && sub.canceled_by_creator) {
      throw new AppError('subscription_canceled', 'The creator canceled this subscription: it ends at the end of the period and only the creator can undo that.');
    }
    if (!cancel && sub.community_status !== 'active') {
      throw new AppError('community_paused', 'This community is paused: its subscriptions end at the end of the period until the creator resumes it.');
    }
    const account = sub.processor_account_id;
    if (sub.cancel_at_period_end === cancel || !account || !sub.processor_subscription_id) {
      // Already so: nothing to ask the processor. A cancel still takes over one a pause set,
      // so that resuming the community leaves the member's decision alone.
      return inTransaction(db, answer, async (trx) => {
        if (cancel && sub.canceled_by_pause) await billing.unmarkCanceledByPause(memberId, id, trx);
        return view(memberId, id, trx);
      });
    }
    const processorId = sub.processor_subscription_id;
    // The processor refuses cancel at period end while a schedule (the member's pending
    // downgrade) holds the subscription: cancelling drops the downgrade.
    if (cancel) await processor.releaseScheduleIfAny(account, processorId, answer?.processorKey('member-cancel-release'));
    await processor.setCancelAtPeriodEnd(account, processorId, cancel, answer?.processorKey(cancel ? 'member-cancel' : 'member-resume'));
    // Read back, numbered after the call. A number taken before the call would not do: an
    // event's read (the release's, an earlier change's still in flight) numbered after it may
    // still hold the subscription from before the call and win over the call's own answer —
    // the member answered that their cancel was not taken. A replayed call is read back too.
    const read = await sync.read(account, processorId);
    return inTransaction(db, answer, async (trx) => {
      await sync.apply(trx, account, read);
      if (sub.canceled_by_pause) await billing.unmarkCanceledByPause(memberId, id, trx);
      return view(memberId, id, trx);
    });
  }

  /** The creator's portal configuration, made on the first visit of any of its members. */
  async function portalConfiguration(target: { creator_id: string; creator_name: string; billing_portal_configuration_id: string | null }, account: string) {
    if (target.billing_portal_configuration_id) return target.billing_portal_configuration_id;
    const id = await processor.createPortalConfiguration(account, { creatorId: target.creator_id, headline: `${target.creator_name}: your membership`.slice(0, 60) });
    await billing.keepPortalConfiguration(target.creator_id, id);
    return id;
  }

  return {
    cancel: (memberId: string, id: string, answer?: KeyedAnswer<MemberSubscriptionView>) => setCancel(memberId, id, true, answer),
    resume: (memberId: string, id: string, answer?: KeyedAnswer<MemberSubscriptionView>) => setCancel(memberId, id, false, answer),

    /**
     * A session of the processor's billing portal for the member's customer on the
     * community's creator (one customer per creator and member, so the portal shows the
     * member's subscriptions with that creator). The link is answered, never stored.
     */
    async billingPortal(memberId: string, communityId: string, answer?: KeyedAnswer<BillingPortalLink>): Promise<BillingPortalLink> {
      const target = await billing.portalTarget(memberId, communityId);
      if (!target?.processor_account_id) throw notFound('Community');
      const account = target.processor_account_id;
      const configuration = await portalConfiguration(target, account);
      const url = await processor.createPortalSession(account, {
        customer: target.processor_customer_id,
        configuration,
        returnUrl: portalReturnUrl,
        ...(answer ? { idempotencyKey: answer.processorKey('billing-portal') } : {}),
      });
      return inTransaction(db, answer, async () => ({ url }));
    },

    /** The member's payments across creators, newest first (ties by id), each with its refunds. */
    async payments(memberId: string, query: PageQuery) {
      const [rows, total] = await Promise.all([billing.payments(memberId, { offset: offsetOf(query), limit: query.limit }), billing.countPayments(memberId)]);
      const refunds = await billing.refundsOf(rows.map((r) => r.processor_payment_intent_id));
      const data = rows.map((r): MemberPayment => {
        const own = refunds.filter((f) => f.processor_payment_intent_id === r.processor_payment_intent_id);
        const amount = Number(r.amount_cents);
        const refunded = own.filter((f) => COUNTS(f.status)).reduce((sum, f) => sum + Number(f.amount_cents), 0);
        return {
          id: r.id,
          subscription_id: r.subscription_id,
          community_id: r.community_id,
          community_name: r.community_name,
          tier_id: r.tier_id,
          tier_name: r.tier_name,
          amount_cents: amount,
          refunded_cents: refunded,
          currency: r.currency,
          status: refunded >= amount && refunded > 0 ? 'refunded' : refunded > 0 ? 'partially_refunded' : 'paid',
          paid_at: iso(r.paid_at),
          refunds: own.slice(0, REFUNDS_SHOWN).map((f) => ({ amount_cents: Number(f.amount_cents), status: f.status, created_at: iso(f.created_at) })),
        };
      });
      return paginated(data, total, query);
    },
  };
}

export type MemberBillingService = ReturnType<typeof createMemberBillingService>;
