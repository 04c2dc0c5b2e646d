import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { PayoutStatus } from '../../db/types.js';

/** The payout mirror as creators read it. Creator id first. */
export function createPayoutsRepo(db: Executor) {
  return {
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
