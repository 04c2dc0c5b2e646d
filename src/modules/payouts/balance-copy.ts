import { sql } from 'kysely';
import type Stripe from 'stripe';
import type { Db } from '../../db/client.js';
import type { Processor } from '../../processor/processor.js';

/** Balance transaction types that move the creator's earnings (DESIGN §7: charges minus refunded net). */
const EARNING_TYPES = ['charge', 'refund'];

const sourceOf = (txn: Stripe.BalanceTransaction) => (typeof txn.source === 'string' ? txn.source : (txn.source?.id ?? null));

/**
 * A local copy of each creator's balance transactions (migrations/0009), so the balance
 * answer reads earnings from a few monthly rows instead of the account's whole history.
 * Copying asks the processor only for what is newer than the last transaction copied; the
 * first copy reads the whole history once. Copies may run concurrently (two balance
 * requests, reconciliation): a transaction is stored once, and only the copy that stores it
 * adds it to the monthly totals — in the same statement.
 */
export function createBalanceCopy({ db, processor }: { db: Db; processor: Processor }) {
  /** Stores these transactions and adds the new ones to the monthly totals; moves the cursor if given. Returns how many were new. */
  async function store(creatorId: string, txns: Stripe.BalanceTransaction[], cursor: string | null): Promise<number> {
    if (txns.length === 0 && !cursor) return 0;
    return db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ added: number }>`
        with added as (
          insert into balance_transactions (id, creator_id, type, amount_cents, fee_cents, net_cents, currency, source, created_at)
          select t.id, ${creatorId}::uuid, t.type, t.amount, t.fee, t.net, t.currency, t.source, to_timestamp(t.created)
          from unnest(${txns.map((x) => x.id)}::text[], ${txns.map((x) => x.type)}::text[], ${txns.map((x) => x.amount)}::bigint[],
                      ${txns.map((x) => x.fee)}::bigint[], ${txns.map((x) => x.net)}::bigint[], ${txns.map((x) => x.currency)}::text[],
                      ${txns.map(sourceOf)}::text[], ${txns.map((x) => x.created)}::bigint[])
               as t(id, type, amount, fee, net, currency, source, created)
          on conflict (id) do nothing
          returning type, currency, created_at, net_cents
        ), months as (
          insert into creator_monthly_net (creator_id, currency, month, net_cents)
          select ${creatorId}::uuid, currency, (date_trunc('month', created_at at time zone 'UTC'))::date, sum(net_cents)
          from added where type = any(${EARNING_TYPES}::text[])
          group by currency, 3
          on conflict (creator_id, currency, month) do update set net_cents = creator_monthly_net.net_cents + excluded.net_cents
        )
        select count(*)::int as added from added`.execute(trx);
      if (cursor) await trx.updateTable('creators').set({ balance_txn_cursor: cursor }).where('id', '=', creatorId).execute();
      return rows[0]!.added;
    });
  }

  return {
    /** Copies what the processor has that the copy lacks; returns how many transactions were new. */
    async copy(creatorId: string, account: string): Promise<number> {
      const creator = await db.selectFrom('creators').select('balance_txn_cursor').where('id', '=', creatorId).executeTakeFirstOrThrow();
      let added = 0;
      if (creator.balance_txn_cursor) {
        for await (const page of processor.balanceTransactionsNewerThan(account, creator.balance_txn_cursor)) {
          added += await store(creatorId, page, page[0]!.id);
        }
        return added;
      }
      // The first copy: the whole history, newest first. The cursor is set only once all of it
      // is stored, to the newest transaction seen when the copy began; whatever appears
      // meanwhile is newer and comes with the next copy.
      let newest: string | null = null;
      let batch: Stripe.BalanceTransaction[] = [];
      for await (const txn of processor.balanceTransactions(account)) {
        newest ??= txn.id;
        batch.push(txn);
        if (batch.length === 500) {
          added += await store(creatorId, batch, null);
          batch = [];
        }
      }
      added += await store(creatorId, batch, newest);
      return added;
    },

    /** Creator net of charges and refunds: all time, and this UTC calendar month. */
    async earnings(creatorId: string, currency: string, now: Date) {
      const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString().slice(0, 10);
      const row = await db
        .selectFrom('creator_monthly_net')
        .select([
          sql<number>`coalesce(sum(net_cents), 0)::bigint`.as('all_time'),
          sql<number>`coalesce(sum(net_cents) filter (where month = ${monthStart}::date), 0)::bigint`.as('this_month'),
        ])
        .where('creator_id', '=', creatorId)
        .where('currency', '=', currency)
        .executeTakeFirstOrThrow();
      return { allTimeNetCents: Number(row.all_time), thisMonthNetCents: Number(row.this_month) };
    },
  };
}

export type BalanceCopy = ReturnType<typeof createBalanceCopy>;
