import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { SubscriptionStatus } from '../../db/types.js';
import type { SubscriptionRow } from '../subscriptions/subscriptions.repo.js';

/** A subscription row with what the member record adds to it; JSON aggregates carry timestamps as text. */
export type HistoryRow = SubscriptionRow & {
  community_name: string;
  tier_name: string;
  changes: Array<{ recorded_at: string; status: SubscriptionStatus; cancel_at_period_end: boolean; tier_id: string; price_cents: number; current_period_end: string | null }>;
  payments: Array<{ id: string; amount_cents: number; currency: string; paid_at: string }>;
  refunds: Array<{ id: string; amount_cents: number; currency: string; status: string; created_at: string }>;
};

/** The member record's history: every subscription the member holds or held with this creator. */
export function createRecordRepo(db: Executor) {
  return {
    /** Oldest first, each with its recorded changes, paid invoices and refunds (one statement). */
    async subscriptionHistory(creatorId: string, memberId: string, trx: Executor = db): Promise<HistoryRow[]> {
      const { rows } = await sql<HistoryRow>`
        select s.*, c.name as community_name, t.name as tier_name,
               (select coalesce(json_agg(json_build_object('recorded_at', ch.recorded_at, 'status', ch.status, 'cancel_at_period_end', ch.cancel_at_period_end,
                                                           'tier_id', ch.tier_id, 'price_cents', ch.price_cents, 'current_period_end', ch.current_period_end)
                                         order by ch.recorded_at, ch.id), '[]')
                from subscription_changes ch where ch.creator_id = s.creator_id and ch.subscription_id = s.id) as changes,
               (select coalesce(json_agg(json_build_object('id', p.id, 'amount_cents', p.amount_cents, 'currency', p.currency, 'paid_at', p.paid_at)
                                         order by p.paid_at, p.id), '[]')
                from payments p where p.creator_id = s.creator_id and p.subscription_id = s.id) as payments,
               (select coalesce(json_agg(json_build_object('id', r.id, 'amount_cents', r.amount_cents, 'currency', r.currency, 'status', r.status, 'created_at', r.created_at)
                                         order by r.created_at, r.id), '[]')
                from refunds r where r.creator_id = s.creator_id and r.subscription_id = s.id) as refunds
        from subscriptions s join tiers t on t.id = s.tier_id join communities c on c.id = s.community_id
        where s.creator_id = ${creatorId} and s.member_id = ${memberId}
        order by s.created_at, s.id`.execute(trx);
      return rows;
    },
  };
}

export type RecordRepo = ReturnType<typeof createRecordRepo>;
