import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { Processor } from '../../processor/processor.js';
import type { AccountService } from '../account/account.service.js';
import { presentMemberSubscription } from '../member-billing/member-view.js';
import type { CheckoutRepo } from './checkout.repo.js';

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
  checkout: CheckoutRepo;
  processor: Processor;
  /** The creator's account must take charges (account/account.service.ts). */
  accounts: Pick<AccountService, 'requireCharges'>;
  successUrl: string;
  cancelUrl: string;
}

/**
 * Hosted checkout for a member. The subscription itself appears only when the processor
 * reports the paid session (checkout.session.completed), never here.
 */
export function createCheckoutService({ db, checkout, processor, accounts, successUrl, cancelUrl }: CheckoutDeps) {
  /** The member's customer on the creator's account, created once and remembered. */
  async function customerFor(creatorId: string, account: string, member: { id: string; email: string; name: string }) {
    const known = await checkout.knownCustomer(creatorId, member.id);
    if (known) return known;
    const created = await processor.createCustomer(account, { creatorId, memberId: member.id, email: member.email, name: member.name });
    await checkout.rememberCustomer(creatorId, member.id, created);
    // A concurrent request may have won the insert; the customer is the same either way
    // (the processor call is idempotent per creator and member), so read back the stored one.
    return (await checkout.knownCustomer(creatorId, member.id)) ?? created;
  }

  /**
   * One live subscription per community also means one payable checkout per community: the
   * member's earlier open sessions there are closed at the processor before a new one opens,
   * so two tabs cannot both be paid. One that was paid meanwhile (its subscription not
   * mirrored yet) means the member is already one: 409, as if the mirror had it.
   */
  async function closeEarlierCheckouts(memberId: string, communityId: string, account: string) {
    for (const earlier of await checkout.openSessionsIn(memberId, communityId)) {
      const status = await processor.expireCheckoutSession(account, earlier.processor_session_id);
      if (status !== 'open') await checkout.setSessionStatus(earlier.processor_session_id, status);
      if (status === 'complete') {
        throw new AppError('already_member', 'Your earlier checkout for this community was just paid: change the tier of that subscription instead (GET /api/v1/member/subscriptions).');
      }
    }
  }

  return {
    /**
     * With an Idempotency-Key the session's id and the processor's key derive from it: a
     * retry after any failure gets the session the first attempt opened, never a second one.
     */
    async open(memberId: string, tierId: string, answer?: KeyedAnswer<CheckoutSession>) {
      const tier = await checkout.tierForCheckout(tierId);
      if (!tier) throw notFound('Tier');
      if (tier.community_status !== 'active') throw new AppError('community_paused', 'This community is paused and is not taking new members.');
      if (!tier.is_active || !tier.processor_price_id || !tier.processor_account_id) {
        throw new AppError('tier_inactive', 'This tier is not accepting new subscriptions.');
      }
      // One live subscription per member and community: another tier is a tier change. (Two
      // checkouts opened at once can both be paid; the processor, not this check, decides then.)
      const live = await checkout.liveSubscriptionIn(memberId, tier.community_id);
      if (live?.tier_id === tierId) throw new AppError('already_subscribed', 'You already hold a live subscription to this tier.');
      if (live) {
        throw new AppError(
          'already_member',
          `You already hold a live subscription (${live.id}) to another tier of this community; change its tier instead: POST /api/v1/member/subscriptions/${live.id}/change-tier.`,
        );
      }
      // Tiers and prices can be prepared before onboarding; members pay only after it.
      await accounts.requireCharges(tier.creator_id);
      await closeEarlierCheckouts(memberId, tier.community_id, tier.processor_account_id);
      const member = await checkout.memberContact(memberId);

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
        const row = await checkout.insertSession(
          { id, creator_id: tier.creator_id, member_id: memberId, tier_id: tier.id, processor_session_id: session.id, url: session.url ?? '' },
          trx,
        );
        return { id: row.id, url: row.url, processor_session_id: row.processor_session_id, tier_id: row.tier_id, status: row.status, created_at: iso(row.created_at) };
      });
    },

    /** The member's own subscriptions across creators, newest first; creators' internal notes never included. */
    async mySubscriptions(memberId: string, query: PageQuery) {
      const [rows, total] = await Promise.all([
        checkout.memberSubscriptions(memberId, { offset: offsetOf(query), limit: query.limit }),
        checkout.countMemberSubscriptions(memberId),
      ]);
      return paginated(rows.map(presentMemberSubscription), total, query);
    },
  };
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;
