import type { Logger } from 'pino';
import type { Transaction } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Database } from '../../db/types.js';
import { newId } from '../../db/ids.js';
import { lockProcessorObject } from '../../db/locks.js';
import { inTransaction } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import type { Processor } from '../../processor/processor.js';
import type { CreatorsRepo } from '../creators/creators.repo.js';
import { requireProcessorAccount } from '../creators/processor-account.js';
import type { SubscriptionsRepo } from './subscriptions.repo.js';
import type { CancelBody, ListSubscriptionsQuery, RefundBody } from './subscriptions.schemas.js';
import type { SubscriptionSync } from './sync.js';
import { recordRefundCreated } from './payments-sync.js';

import { presentRefund, presentSubscription, type Subscription } from './present.js';

export { presentSubscription, type Subscription };

export interface Refund {
  id: string;
  subscription_id: string;
  amount_cents: number;
  currency: string;
  status: string;
  processor_refund_id: string;
  created_at: string;
}

/** Passes of convergePause before it leaves the rest to the next trigger or reconciliation. */
const MAX_CONVERGE_PASSES = 5;

type PauseWork = Awaited<ReturnType<SubscriptionsRepo['pauseWork']>>[number];

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

  /** Sets cancel-at-period-end at the processor, then mirrors the subscription as read back after. */
  async function setAndReread(account: string, processorId: string, cancel: boolean, after?: (trx: Transaction<Database>) => Promise<unknown>) {
    // The processor refuses cancel at period end while a schedule (a member's pending downgrade) holds it.
    if (cancel) await processor.releaseScheduleIfAny(account, processorId);
    await processor.setCancelAtPeriodEnd(account, processorId, cancel);
    const read = await sync.read(account, processorId);
    await db.transaction().execute(async (trx) => {
      await sync.apply(trx, account, read);
      await after?.(trx);
    });
  }

  /**
   * One pass of convergePause under the status read at its start: how many subscriptions it
   * changed, or undefined when the lease was lost (expired and taken by another run).
   */
  async function convergePass(creatorId: string, communityId: string, account: string, token: string): Promise<number | undefined> {
    const status = await subscriptions.communityStatus(creatorId, communityId);
    if (!status) return 0;
    const paused = status === 'paused';
    let moved = 0;
    let after: string | null = null;
    for (;;) {
      const page = await subscriptions.pauseWork(creatorId, communityId, paused, after, 100);
      if (page.length === 0) return moved;
      for (const s of page) {
        if (!(await subscriptions.renewPauseLease(communityId, token))) return undefined;
        try {
          if (await convergeOne(creatorId, account, s, paused)) moved++;
        } catch (err) {
          logger.warn({ err, subscription: s.id }, 'could not carry the community status to a subscription; reconciliation will retry');
        }
      }
      after = page[page.length - 1]!.id;
    }
  }

  /** One step of convergePause for one subscription; false when there was nothing to do. */
  async function convergeOne(creatorId: string, account: string, s: PauseWork, paused: boolean): Promise<boolean> {
    const processorId = s.processor_subscription_id ?? '';
    if (paused || s.canceled_by_creator) {
      // Marked before the processor call: a crash in between leaves it for a resume to lift.
      if (paused && !s.canceled_by_creator && !s.canceled_by_pause && !(await subscriptions.markCanceledByPause(creatorId, s.id, true))) return false;
      if (s.cancel_at_period_end) return false;
      await setAndReread(account, processorId, true);
      return true;
    }
    // Lifted at the processor first, unmarked after (only if the community is still active).
    await setAndReread(account, processorId, false, (trx) => subscriptions.markCanceledByPause(creatorId, s.id, false, trx));
    return true;
  }

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
      if (sub.status === 'incomplete_expired') throw new AppError('subscription_canceled', 'The subscription has ended: its first payment never succeeded.');
      const account = await accountOf(creatorId);
      const processorId = sub.processor_subscription_id ?? '';
      const key = answer?.processorKey('cancel');
      if (body.immediate) await processor.cancelNow(account, processorId, key);
      else {
        // The processor refuses cancel at period end while a schedule (a member's pending downgrade) holds it.
        await processor.releaseScheduleIfAny(account, processorId, key);
        await processor.setCancelAtPeriodEnd(account, processorId, true, key);
      }
      // Read back, numbered after the call: an event's read numbered after a number taken
      // before it (the release's, an earlier change's still in flight) may hold the
      // subscription from before the cancel and would win over the call's own answer.
      const read = await sync.read(account, processorId);
      return inTransaction(db, answer, async (trx) => {
        // The mirror's lock of this processor subscription before its row: an event's write
        // (sync.apply) takes them in that order, and the reason's update taken first deadlocked
        // with it (a 500 under load). apply takes the lock again, which a transaction may.
        await lockProcessorObject(trx, processorId);
        // The reason first: the mirror's write below sends the subscription events, which carry it.
        if (body.reason) await subscriptions.setCancellationReason(creatorId, id, body.reason, trx);
        await sync.apply(trx, account, read);
        // The creator's own cancel wins over a pause or resume (convergePause keeps it).
        await subscriptions.markCanceledByCreator(creatorId, id, trx);
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
        if (stored.inserted) await recordRefundCreated(trx, creatorId, stored);
        return presentRefund({ ...stored, subscription_id: id });
      });
    },

    /**
     * Brings every live subscription of a community to where the community's own status wants
     * it: paused → set to cancel at period end (marked canceled_by_pause first, so a crash
     * never leaves one set that a resume would not find); active → the ones a pause set are
     * lifted (at the processor first, unmarked after, so a crash leaves them marked). A
     * creator's own cancel wins over both: it stays set, and is set again if a resume lifted
     * it meanwhile. One run per community writes at a time (a lease on the community row,
     * renewed per subscription, freed after two minutes if its holder died); a run that finds
     * it held asks the holder for another pass, and the holder passes again (re-reading the
     * status) until a pass finds nothing to do and no pass was asked for. After each change
     * the subscription is read back with a fresh sequence number, so the mirror ends on what
     * the processor holds. Pause, resume and reconciliation (both directions: what a crash
     * left) all run this; any order converges. Returns how many subscriptions it changed.
     */
    async convergePause(creatorId: string, communityId: string) {
      const token = newId();
      if (!(await subscriptions.takePauseLease(creatorId, communityId, token))) return 0; // the holder passes again
      let changed = 0;
      let freed = false;
      try {
        const account = await accountOf(creatorId);
        for (let pass = 0; pass < MAX_CONVERGE_PASSES && !freed; pass++) {
          const moved = await convergePass(creatorId, communityId, account, token);
          if (moved === undefined) return changed; // the lease was lost: its new holder goes on
          changed += moved;
          // Done when a pass found nothing to do and no one asked for another meanwhile.
          if (moved === 0) freed = await subscriptions.releasePauseLease(communityId, token);
        }
        return changed;
      } finally {
        if (!freed) await subscriptions.releasePauseLease(communityId, token, true).catch(() => undefined);
      }
    },
  };
}

export type SubscriptionsService = ReturnType<typeof createSubscriptionsService>;
