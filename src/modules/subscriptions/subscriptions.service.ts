import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, isoOrNull } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import { wasReplayed, type Processor } from '../../processor/processor.js';
import type { CreatorsRepo } from '../creators/creators.repo.js';
import { requireProcessorAccount } from '../creators/processor-account.js';
import type { SubscriptionRow, SubscriptionsRepo } from './subscriptions.repo.js';
import type { CancelBody, ListSubscriptionsQuery, RefundBody } from './subscriptions.schemas.js';
import type { SubscriptionSync } from './sync.js';

export const presentSubscription = (s: SubscriptionRow) => ({
  id: s.id,
  community_id: s.community_id,
  tier_id: s.tier_id,
  member_id: s.member_id,
  status: s.status,
  price_cents: Number(s.price_cents),
  billing_period: s.billing_period,
  current_period_start: isoOrNull(s.current_period_start),
  current_period_end: isoOrNull(s.current_period_end),
  cancel_at_period_end: s.cancel_at_period_end,
  canceled_at: isoOrNull(s.canceled_at),
  ended_at: isoOrNull(s.ended_at),
  trial_end: isoOrNull(s.trial_end),
  cancellation_reason: s.cancellation_reason,
  created_at: iso(s.created_at),
  processor_subscription_id: s.processor_subscription_id ?? '',
});

export type Subscription = ReturnType<typeof presentSubscription>;

export interface Refund {
  id: string;
  subscription_id: string;
  amount_cents: number;
  currency: string;
  status: string;
  processor_refund_id: string;
  created_at: string;
}

export interface SubscriptionsDeps {
  db: Db;
  subscriptions: SubscriptionsRepo;
  creators: CreatorsRepo;
  processor: Processor;
  sync: SubscriptionSync;
  logger: Logger;
}

/** Creator actions on subscriptions: each goes to the processor first and mirrors its answer. */
export function createSubscriptionsService({ db, subscriptions, creators, processor, sync, logger }: SubscriptionsDeps) {
  async function load(creatorId: string, id: string) {
    const row = await subscriptions.find(creatorId, id);
    if (!row) throw notFound('Subscription');
    return row;
  }

  const accountOf = (creatorId: string) => requireProcessorAccount(creators, creatorId);

  return {
    async get(creatorId: string, id: string) {
      return presentSubscription(await load(creatorId, id));
    },

    async list(creatorId: string, q: ListSubscriptionsQuery) {
      const filter = {
        ...(q.community_id ? { communityId: q.community_id } : {}),
        ...(q.tier_id ? { tierId: q.tier_id } : {}),
        ...(q.member_id ? { memberId: q.member_id } : {}),
        ...(q.status ? { status: q.status } : {}),
      };
      const [rows, total] = await Promise.all([
        subscriptions.list(creatorId, { ...filter, offset: offsetOf(q), limit: q.limit }),
        subscriptions.count(creatorId, filter),
      ]);
      return paginated(rows.map(presentSubscription), total, q);
    },

    /**
     * With an Idempotency-Key the processor's key derives from it: a retry after any
     * failure gets the processor's first answer, re-read since (events may have moved it).
     */
    async cancel(creatorId: string, id: string, body: CancelBody, answer?: KeyedAnswer<Subscription>) {
      const sub = await load(creatorId, id);
      if (sub.status === 'canceled') throw new AppError('subscription_canceled', 'The subscription is already canceled.');
      const account = await accountOf(creatorId);
      const processorId = sub.processor_subscription_id ?? '';
      const key = answer?.processorKey('cancel');
      let seq = await sync.nextSeq();
      let fresh = body.immediate ? await processor.cancelNow(account, processorId, key) : await processor.setCancelAtPeriodEnd(account, processorId, true, key);
      if (wasReplayed(fresh)) {
        seq = await sync.nextSeq();
        fresh = await processor.retrieveSubscription(account, processorId);
      }
      return inTransaction(db, answer, async (trx) => {
        await sync.apply(trx, account, { seq, subscription: fresh });
        if (body.reason) await subscriptions.setCancellationReason(creatorId, id, body.reason, trx);
        return presentSubscription((await subscriptions.find(creatorId, id, trx))!);
      });
    },

    /**
     * Refunds the last paid invoice (all that remains of it, or `amount_cents`). With an
     * Idempotency-Key the processor's key derives from it: a retry after any failure (the
     * local write, a timeout, a crash) gets the first refund back instead of a second one.
     */
    async refund(creatorId: string, id: string, body: RefundBody, answer?: KeyedAnswer<Refund>) {
      const sub = await load(creatorId, id);
      const account = await accountOf(creatorId);
      const payment = await processor.lastPayment(account, sub.processor_subscription_id ?? '');
      if (!payment) throw new AppError('nothing_to_refund', 'This subscription has no paid invoice to refund (a trial has no payment).');
      const refund = await processor.refund(account, {
        paymentIntent: payment.paymentIntent,
        ...(body.amount_cents ? { amountCents: body.amount_cents } : {}),
        metadata: { subscription_id: id, creator_id: creatorId },
        ...(answer ? { idempotencyKey: answer.processorKey('refund') } : {}),
      });
      const row = {
        id: newId(),
        subscription_id: id,
        amount_cents: refund.amount,
        currency: refund.currency,
        status: refund.status ?? 'succeeded',
        processor_refund_id: refund.id,
        processor_charge_id: typeof refund.charge === 'string' ? refund.charge : (refund.charge?.id ?? null),
        created_at: new Date(refund.created * 1000),
      };
      return inTransaction(db, answer, async (trx): Promise<Refund> => {
        const stored = await subscriptions.insertRefund(creatorId, row, trx);
        return {
          id: stored.id,
          subscription_id: id,
          amount_cents: Number(stored.amount_cents),
          currency: stored.currency,
          status: stored.status,
          processor_refund_id: stored.processor_refund_id,
          created_at: iso(stored.created_at),
        };
      });
    },

    /**
     * Carries a community pause (or resume) to the processor: live subscriptions are set to
     * cancel at period end, and a resume lifts exactly those a pause set. Runs in pages after
     * the pause is committed; reconciliation repeats it for anything left over.
     */
    async propagatePause(creatorId: string, communityId: string, paused: boolean) {
      const account = await accountOf(creatorId);
      let after: string | null = null;
      let changed = 0;
      for (;;) {
        const page = await subscriptions.liveInCommunity(creatorId, communityId, paused ? 'to_pause' : 'to_resume', after, 100);
        if (page.length === 0) return changed;
        for (const s of page) {
          try {
            const seq = await sync.nextSeq();
            const fresh = await processor.setCancelAtPeriodEnd(account, s.processor_subscription_id ?? '', paused);
            await db.transaction().execute(async (trx) => {
              await sync.apply(trx, account, { seq, subscription: fresh });
              await subscriptions.markCanceledByPause(creatorId, s.id, paused, trx);
            });
            changed++;
          } catch (err) {
            logger.warn({ err, subscription: s.id }, 'could not carry the community pause to a subscription; reconciliation will retry');
          }
        }
        after = page[page.length - 1]!.id;
      }
    },
  };
}

export type SubscriptionsService = ReturnType<typeof createSubscriptionsService>;
