import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import type { Processor } from '../../processor/processor.js';
import type { CommunitiesRepo } from '../communities/communities.repo.js';
import type { CreatorsRepo } from '../creators/creators.repo.js';
import { createMetricsAggregates } from '../metrics/aggregates.js';
import type { BalanceCopy } from '../payouts/balance-copy.js';
import type { PayoutSync } from '../payouts/payout-sync.js';
import type { AccountSync } from '../account/account-sync.js';
import type { PaymentsSync } from '../subscriptions/payments-sync.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { SubscriptionSync } from '../subscriptions/sync.js';
import type { Inbox } from '../webhooks/inbox.js';

export interface ReconcileReport {
  creators: number;
  subscriptions_checked: number;
  subscriptions_fixed: number;
  pause_fixes: number;
  accounts_updated: number;
  payouts_fixed: number;
  balance_transactions_copied: number;
  payments_added: number;
  refunds_added: number;
  metrics_rows_fixed: number;
  events_processed: number;
  errors: number;
}

/**
 * Compares the mirror with the processor and heals drift, so a lost webhook costs nothing:
 * replays due inbox events, re-reads each creator's account and every subscription, payout, paid invoice and refund of
 * every connected account, copies the balance transactions the local copy lacks,
 * re-applies community pauses the processor does not reflect yet, and recomputes the creator
 * metrics' counters from the mirror (metrics/aggregates.ts).
 */
export function createReconciler(deps: {
  db: Db;
  creators: Pick<CreatorsRepo, 'withProcessorAccounts'>;
  communities: Pick<CommunitiesRepo, 'idsOf'>;
  processor: Processor;
  sync: SubscriptionSync;
  payoutSync: PayoutSync;
  accountSync: Pick<AccountSync, 'refresh'>;
  balanceCopy: BalanceCopy;
  payments: PaymentsSync;
  subscriptions: SubscriptionsService;
  inbox: Inbox;
  logger: Logger;
  /** The clock activity is stamped with (the metrics' fold watermark). */
  now?: () => Date;
}) {
  const { db, creators, communities, processor, sync, payoutSync, accountSync, balanceCopy, payments, subscriptions, inbox, logger } = deps;
  const aggregates = createMetricsAggregates({ now: deps.now });

  async function creatorPage(afterId: string | null, only?: string) {
    return creators.withProcessorAccounts(afterId, 100, only);
  }

  async function reconcileCreator(creatorId: string, account: string, report: ReconcileReport) {
    // The account first: whether it can take charges and pay out is what members meet first.
    if (await accountSync.refresh(account)) report.accounts_updated++;
    // One sequence number before listing: any read that starts later is newer and wins.
    const seq = await sync.nextSeq();
    for await (const subscription of processor.allSubscriptions(account)) {
      report.subscriptions_checked++;
      const result = await db.transaction().execute((trx) => sync.apply(trx, account, { seq, subscription }));
      if (result?.changed) report.subscriptions_fixed++;
    }
    // Both directions: paused communities' subscriptions set, active ones' pause marks lifted,
    // creator cancels kept (a crash mid-propagation leaves work for exactly this).
    for (const communityId of await communities.idsOf(creatorId)) report.pause_fixes += await subscriptions.convergePause(creatorId, communityId);
    report.payouts_fixed += await payoutSync.reconcile(account);
    report.balance_transactions_copied += await balanceCopy.copy(creatorId, account);
    const added = await payments.reconcile(account);
    report.payments_added += added.payments;
    report.refunds_added += added.refunds;
    // Last, once the mirror is right: the metrics' counters recomputed from it, differences fixed.
    report.metrics_rows_fixed += await aggregates.reconcile(creatorId, db);
  }

  return {
    /** Every creator, or only `creatorId` (an operator looking into one account). */
    async run(opts: { creatorId?: string } = {}): Promise<ReconcileReport> {
      const report: ReconcileReport = { creators: 0, subscriptions_checked: 0, subscriptions_fixed: 0, pause_fixes: 0, accounts_updated: 0, payouts_fixed: 0, balance_transactions_copied: 0, payments_added: 0, refunds_added: 0, metrics_rows_fixed: 0, events_processed: 0, errors: 0 };
      report.events_processed = await inbox.drain();
      let after: string | null = null;
      for (;;) {
        const page = await creatorPage(after, opts.creatorId);
        if (page.length === 0) break;
        for (const creator of page) {
          report.creators++;
          try {
            await reconcileCreator(creator.id, creator.processor_account_id!, report);
          } catch (err) {
            report.errors++;
            logger.warn({ err, creator: creator.id }, 'reconciliation of a creator failed; the next run retries');
          }
        }
        after = page[page.length - 1]!.id;
      }
      logger.info({ report }, 'reconciliation finished');
      return report;
    },
  };
}

export type Reconciler = ReturnType<typeof createReconciler>;
