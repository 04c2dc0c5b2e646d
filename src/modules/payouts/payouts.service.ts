import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, isoOrNull, type Executor } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import { ProcessorDeclined } from '../../processor/errors.js';
import { wasReplayed, type Processor } from '../../processor/processor.js';
import { amountIn, readLedger } from './ledger.js';
import type { BalanceCopy } from './balance-copy.js';
import type { PayoutSync } from './payout-sync.js';
import type { PayoutsRepo } from './payouts.repo.js';
import type { ListPayoutsQuery, ManualPayoutBody } from './payouts.schemas.js';
import { nextAutoPayoutAt } from './schedule.js';
import type { AccountService } from '../account/account.service.js';

import { presentPayout, type Payout } from './present.js';

export { presentPayout, type Payout };

export function createPayoutsService(deps: {
  db: Db;
  payouts: PayoutsRepo;
  processor: Processor;
  accounts: Pick<AccountService, 'current' | 'confirmed'>;
  payoutSync: PayoutSync;
  balanceCopy: BalanceCopy;
  currency: string;
  minimumCents: number;
}) {
  const { db, payouts, processor, accounts, payoutSync, balanceCopy, currency, minimumCents } = deps;

  /** The account and its schedule as kept (account/account.service.ts: read from the processor if it never was). */
  async function accountOf(creatorId: string) {
    const row = await accounts.current(creatorId);
    return { account: row.processor_account_id, interval: row.payout_schedule ?? 'daily', anchor: row.payout_schedule_anchor, payoutsEnabled: row.payouts_enabled === true };
  }

  return {
    async balance(creatorId: string) {
      const { account, interval, anchor, payoutsEnabled } = await accountOf(creatorId);
      // available/pending as the processor holds them now; earnings from the local copy of
      // balance transactions, first brought up to date (usually one empty page).
      const [balance] = await Promise.all([processor.retrieveBalance(account), balanceCopy.copy(creatorId, account)]);
      const earnings = await balanceCopy.earnings(creatorId, currency, new Date());
      return {
        currency,
        available_cents: amountIn(balance.available, currency),
        pending_cents: amountIn(balance.pending, currency),
        this_month_received_cents: earnings.thisMonthNetCents,
        all_time_cents: earnings.allTimeNetCents,
        next_auto_payout_at: payoutsEnabled ? isoOrNull(nextAutoPayoutAt(interval, anchor, new Date())) : null,
        payout_schedule: interval as 'daily' | 'weekly' | 'monthly' | 'manual',
      };
    },

    /** The processor's full history checked (ledger.ts), plus the local copy the balance answer reads held against it. */
    async ledger(creatorId: string) {
      const { account } = await accountOf(creatorId);
      await balanceCopy.copy(creatorId, account);
      const ledger = await readLedger(processor, account, currency);
      const local = await balanceCopy.earnings(creatorId, currency, new Date());
      // All-time only: the month split follows the same transactions, and the processor's
      // clock (the simulator's can run ahead) need not agree with ours on "this month".
      const same = local.allTimeNetCents === ledger.all_time_net_cents;
      ledger.checks.push({
        name: 'local copy of balance transactions = processor',
        ok: same,
        detail: `all-time net ${local.allTimeNetCents} locally, ${ledger.all_time_net_cents} at the processor (a charge landing during the check can differ once; run it again)`,
      });
      ledger.ok &&= same;
      return ledger;
    },

    async list(creatorId: string, q: ListPayoutsQuery) {
      const filter = q.status ? { status: q.status } : {};
      const [rows, total] = await Promise.all([payouts.list(creatorId, { ...filter, offset: offsetOf(q), limit: q.limit }), payouts.count(creatorId, filter)]);
      return paginated(rows.map(presentPayout), total, q);
    },

    async get(creatorId: string, id: string) {
      const row = await payouts.find(creatorId, id);
      if (!row) throw notFound('Payout');
      return presentPayout(row);
    },

    /**
     * The processor checks the balance atomically, so it goes first and its refusal is
     * explained with the balance afterwards. With an Idempotency-Key the processor's key
     * derives from it: a retry after any failure gets the payout the first attempt made.
     */
    async manual(creatorId: string, body: ManualPayoutBody, answer?: KeyedAnswer<Payout>) {
      // Refusals are confirmed by a fresh read: the change in the dashboard may not have arrived yet.
      const row = await accounts.confirmed(creatorId, (r) => r.payouts_enabled === true && r.payout_schedule === 'manual');
      const account = row.processor_account_id;
      const interval = row.payout_schedule ?? 'daily';
      if (row.payouts_enabled !== true) {
        const reason = row.account_requirements?.disabled_reason;
        throw new AppError(
          'payouts_not_enabled',
          `The payment processor has disabled payouts on your account${reason ? ` (${reason})` : ''}. GET /api/v1/account says what it requires; provide it through a new onboarding link (POST /api/v1/account/onboarding-link).`,
        );
      }
      if (interval !== 'manual') {
        throw new AppError(
          'manual_payouts_disabled',
          `Manual payouts are available only when the payout schedule is manual; it is ${interval}. Change it in your payment processor dashboard (payout settings).`,
        );
      }
      if (body.amount_cents < minimumCents) {
        throw new AppError('amount_below_minimum', `The minimum manual payout is ${minimumCents} cents.`, [{ field: 'amount_cents', message: `must be at least ${minimumCents}` }]);
      }
      const seq = await payoutSync.nextSeq();
      const payout = await processor
        .createPayout(account, { amountCents: body.amount_cents, currency, idempotencyKey: answer?.processorKey('payout') ?? `manual-payout-${newId()}` })
        .catch(async (err: unknown) => {
          if (!(err instanceof ProcessorDeclined && err.reason === 'balance_insufficient')) throw err;
          const available = amountIn((await processor.retrieveBalance(account)).available, currency);
          throw new AppError('insufficient_balance', `Only ${available} cents are available to pay out.`, [
            { field: 'amount_cents', message: `exceeds the available balance of ${available}` },
          ]);
        });
      // A replayed answer is the payout as it was first created; events may have moved it since.
      const mirror = wasReplayed(payout) ? await payoutSync.read(account, payout.id) : (trx: Executor) => payoutSync.apply(trx, account, seq, payout);
      return inTransaction(db, answer, async (trx) => {
        const written = await mirror(trx);
        return presentPayout((await payouts.find(creatorId, written!.id, trx))!);
      });
    },
  };
}

export type PayoutsService = ReturnType<typeof createPayoutsService>;
