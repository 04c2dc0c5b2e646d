import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { PayoutStatus } from '../../db/types.js';

/** The payout mirror as creators read it, and the payout schedule kept on the creator. Creator id first. */
export function createPayoutsRepo(db: Executor) {
  return {
    async schedule(creatorId: string) {
      return db.selectFrom('creators').select(['processor_account_id', 'payout_schedule', 'payout_schedule_anchor']).where('id', '=', creatorId).executeTakeFirst();
    },

    async saveSchedule(creatorId: string, interval: string, anchor: Record<string, unknown>) {
      await db.updateTable('creators').set({ payout_schedule: interval, payout_schedule_anchor: JSON.stringify(anchor) }).where('id', '=', creatorId).execute();
    },

    /** The schedule as the processor's account.updated says it (the creator found by account). */
    async saveScheduleOfAccount(account: string, interval: string | null, anchor: Record<string, unknown>, trx: Executor = db) {
      await trx
        .updateTable('creators')
        .set({ payout_schedule: interval, payout_schedule_anchor: JSON.stringify(anchor), updated_at: new Date() })
        .where('processor_account_id', '=', account)
        .execute();
    },

    /** Newest first (processor creation time), ties by id. */
    async list(creatorId: string, filter: { status?: PayoutStatus; offset: number; limit: number }) {
      let q = db.selectFrom('payouts').selectAll().where('creator_id', '=', creatorId);
      if (filter.status) q = q.where('status', '=', filter.status);
      return q.orderBy('created_at', 'desc').orderBy('id', 'desc').offset(filter.offset).limit(filter.limit).execute();
    },

    async count(creatorId: string, filter: { status?: PayoutStatus }): Promise<number> {
      let q = db.selectFrom('payouts').select(sql<number>`count(*)::int`.as('n')).where('creator_id', '=', creatorId);
      if (filter.status) q = q.where('status', '=', filter.status);
      return (await q.executeTakeFirstOrThrow()).n;
    },

    async find(creatorId: string, id: string, trx: Executor = db) {
      return trx.selectFrom('payouts').selectAll().where('creator_id', '=', creatorId).where('id', '=', id).executeTakeFirst();
    },
  };
}

export type PayoutsRepo = ReturnType<typeof createPayoutsRepo>;
