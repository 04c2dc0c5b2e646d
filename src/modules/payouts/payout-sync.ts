import type Stripe from 'stripe';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { lockProcessorObject } from '../../db/locks.js';
import type { Executor } from '../../db/tx.js';
import type { PayoutStatus } from '../../db/types.js';
import type { Processor } from '../../processor/processor.js';
import type { SubscriptionSync } from '../subscriptions/sync.js';
import { recordEvents } from '../events/outbox.js';
import { presentPayout } from './present.js';

const STATUS: Record<string, PayoutStatus> = { pending: 'pending', in_transit: 'in_transit', paid: 'paid', failed: 'failed', canceled: 'canceled' };

/**
 * The payout mirror, written only from what the processor says now. Reads are ordered by
 * the same sequence as subscriptions (taken before each read), so an old read never
 * overwrites a newer one.
 */
export function createPayoutSync({ db, processor, sync }: { db: Db; processor: Processor; sync: Pick<SubscriptionSync, 'nextSeq'> }) {
  async function apply(trx: Executor, account: string, seq: number, payout: Stripe.Payout) {
    const creator = await trx.selectFrom('creators').select('id').where('processor_account_id', '=', account).executeTakeFirst();
    if (!creator) return undefined;
    const values = {
      amount_cents: payout.amount,
      currency: payout.currency,
      status: STATUS[payout.status] ?? 'pending',
      method: payout.automatic ? ('automatic' as const) : ('manual' as const),
      arrival_date: payout.arrival_date ? new Date(payout.arrival_date * 1000) : null,
      failure_code: payout.failure_code ?? null,
      failure_reason: payout.failure_message ?? null,
    };
    await lockProcessorObject(trx, payout.id);
    const before = await trx.selectFrom('payouts').select(['id', 'status', 'synced_seq']).where('processor_payout_id', '=', payout.id).forUpdate().executeTakeFirst();
    if (before && Number(before.synced_seq) >= seq) return { id: before.id, changed: false };
    const row = await trx
      .insertInto('payouts')
      .values({ id: newId(), creator_id: creator.id, processor_payout_id: payout.id, created_at: new Date(payout.created * 1000), synced_seq: seq, ...values })
      .onConflict((oc) => oc.column('processor_payout_id').doUpdateSet({ ...values, synced_seq: seq, updated_at: new Date() }).where('payouts.synced_seq', '<', seq))
      .returning(['id', 'processor_payout_id', 'created_at'])
      .executeTakeFirst();
    if (row) {
      const changed = !before || before.status !== values.status;
      // Sent in the write that moved the status there: a re-read of a paid payout sends nothing.
      if (changed && (values.status === 'paid' || values.status === 'failed')) {
        await recordEvents(trx, creator.id, [{ type: values.status === 'paid' ? 'payout.paid' : 'payout.failed', data: presentPayout({ ...values, ...row }) }]);
      }
      return { id: row.id, changed };
    }
    // A newer read (an event's) stored it meanwhile, after this one looked: it stands.
    const stored = await trx.selectFrom('payouts').select('id').where('processor_payout_id', '=', payout.id).executeTakeFirstOrThrow();
    return { id: stored.id, changed: false };
  }

  return {
    apply,
    nextSeq: () => sync.nextSeq(),
    /** Re-reads one payout and mirrors it (events, manual payouts). */
    async read(account: string, payoutId: string) {
      const seq = await sync.nextSeq();
      const payout = await processor.retrievePayout(account, payoutId);
      return (trx: Executor) => apply(trx, account, seq, payout);
    },
    /** Mirrors every payout of an account (reconciliation); returns how many rows changed. */
    async reconcile(account: string) {
      const seq = await sync.nextSeq();
      let changed = 0;
      for await (const payout of processor.payouts(account)) {
        const result = await db.transaction().execute((trx) => apply(trx, account, seq, payout));
        if (result?.changed) changed++;
      }
      return changed;
    },
  };
}

export type PayoutSync = ReturnType<typeof createPayoutSync>;
