import type Stripe from 'stripe';
import type { Db } from '../../db/client.js';
import { inTransaction } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import type { Processor } from '../../processor/processor.js';
import { scheduleIdOf } from '../../processor/schedules.js';
import type { ProcessorRead, SubscriptionSync } from '../subscriptions/sync.js';
import { holdsAtLeast } from '../tiers/tier-order.js';
import { presentMemberSubscription, type MemberSubscriptionView } from '../member-billing/member-view.js';
import type { MemberSubscriptionsRepo } from './member-subscriptions.repo.js';

export type ChangedSubscription = MemberSubscriptionView;

export interface MemberSubscriptionsDeps {
  db: Db;
  repo: MemberSubscriptionsRepo;
  processor: Processor;
  sync: SubscriptionSync;
}

/**
 * A member moves their subscription to another tier of its community. Higher in the tier
 * order (tier-order.ts): now, prorated and invoiced at once, so the new tier's content opens
 * with the answer. Not higher: at the end of the period, through a processor schedule; the
 * member keeps what they paid for until then. During a trial nothing was paid, so either way
 * it is now and without a charge. The processor acts first; the mirror takes its answer.
 */
export function createMemberSubscriptionsService({ db, repo, processor, sync }: MemberSubscriptionsDeps) {
  /** Writes the processor's answer into the mirror and answers the member's view, with the stored answer of a keyed request. */
  function mirrorAndAnswer(memberId: string, id: string, account: string, read: ProcessorRead, answer?: KeyedAnswer<ChangedSubscription>) {
    return inTransaction(db, answer, async (trx) => {
      await sync.apply(trx, account, read);
      return presentMemberSubscription((await repo.view(memberId, id, trx))!);
    });
  }

  /**
   * A price change now, then the subscription read back. The read's sequence number is taken
   * after the processor acted: an event's read numbered later then sees the change too, while
   * one numbered before the call (the release's event, say) could hold the old price and would
   * otherwise win over the call's own answer. A replayed call reads the subscription as it is now.
   */
  async function changeNow(account: string, sub: Stripe.Subscription, priceId: string, key?: string): Promise<ProcessorRead> {
    const scheduleId = scheduleIdOf(sub);
    // A pending downgrade would undo this at the period end: it goes first.
    if (scheduleId) await processor.releaseSchedule(account, scheduleId, key);
    // An earlier upgrade whose card was declined left a pending update waiting on its open
    // invoice. Voiding that invoice drops it, so this attempt is priced and charged afresh
    // (now, to the tier asked for now) instead of paying the old attempt's proration.
    if (sub.pending_update) await processor.voidPendingUpdateInvoices(account, sub.id, key);
    const changed = await processor.changeSubscriptionPrice(account, {
      subscriptionId: sub.id,
      itemId: sub.items.data[0]!.id,
      priceId,
      proration: sub.status === 'trialing' ? 'none' : 'always_invoice',
      ...(key ? { idempotencyKey: key } : {}),
    });
    // pending_if_incomplete: the prorated invoice was declined, so the processor kept the old
    // price (the pending update lapses on its own); the mirror has nothing to take.
    if (changed.pending_update) {
      throw new AppError(
        'payment_declined',
        'Your card was declined, so the tier did not change: the subscription keeps its current tier and nothing was charged. Update your card in the billing portal (POST /api/v1/member/billing-portal) — a new card there pays this upgrade within a day — or, once the card is fixed, try the change again.',
      );
    }
    return sync.read(account, sub.id);
  }

  return {
    async changeTier(memberId: string, id: string, tierId: string, answer?: KeyedAnswer<ChangedSubscription>) {
      const sub = await repo.forTierChange(memberId, id);
      if (!sub) throw notFound('Subscription');
      const tiers = await repo.communityTiers(sub.creator_id, sub.community_id);
      // A tier of another community or creator is not found, whether or not it exists.
      const target = tiers.find((t) => t.id === tierId);
      if (!target) throw notFound('Tier');
      if (sub.status === 'canceled' || sub.status === 'incomplete_expired') throw new AppError('subscription_canceled', 'The subscription has ended: start a new one through checkout.');
      if (sub.status !== 'active' && sub.status !== 'trialing') {
        throw new AppError('conflict', `The subscription is ${sub.status}: settle its payment in the billing portal before changing its tier.`);
      }
      // Before cancel at period end: pausing a community sets that on every subscription of it.
      if (sub.community_status !== 'active') throw new AppError('community_paused', 'This community is paused: its tiers cannot be changed until the creator resumes it.');
      if (sub.cancel_at_period_end) throw new AppError('subscription_canceling', 'The subscription is set to cancel at the end of its period: resume it first, then change its tier.');
      const account = sub.processor_account_id;
      const processorId = sub.processor_subscription_id;
      if (!account || !processorId) throw notFound('Subscription');
      const key = answer?.processorKey('change-tier');

      if (tierId === sub.tier_id) {
        if (!sub.scheduled_tier_id) throw new AppError('same_tier', 'The subscription already holds this tier.');
        // Back to the tier it holds: the pending change is dropped, nothing else moves.
        const current = await processor.retrieveSubscription(account, processorId);
        const scheduleId = scheduleIdOf(current);
        if (scheduleId) await processor.releaseSchedule(account, scheduleId, key);
        return mirrorAndAnswer(memberId, id, account, await sync.read(account, processorId), answer);
      }
      if (!target.is_active || !target.processor_price_id) throw new AppError('tier_inactive', 'This tier is not accepting new subscriptions.');

      const current = await processor.retrieveSubscription(account, processorId);
      const item = current.items.data[0];
      if (!item) throw notFound('Subscription');
      // Higher in the community's order: the one rule the paywall and challenges use (holdsAtLeast).
      const upgrade = !holdsAtLeast(tiers, [sub.tier_id], tierId);
      if (upgrade || current.status === 'trialing') {
        return mirrorAndAnswer(memberId, id, account, await changeNow(account, current, target.processor_price_id, key), answer);
      }
      await processor.scheduleDowngrade(account, {
        subscriptionId: processorId,
        scheduleId: scheduleIdOf(current),
        currentPriceId: item.price.id,
        priceId: target.processor_price_id,
        billingPeriod: target.billing_period,
        periodEnd: item.current_period_end,
        ...(key ? { idempotencyKey: key } : {}),
      });
      // Read back with its schedule, so the mirror stores what the processor will do and when.
      return mirrorAndAnswer(memberId, id, account, await sync.read(account, processorId), answer);
    },
  };
}

export type MemberSubscriptionsService = ReturnType<typeof createMemberSubscriptionsService>;
