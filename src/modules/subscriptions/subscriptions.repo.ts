import { sql } from 'kysely';
import { compiledQueries } from '../../db/compiled.js';
import { plannedOnce } from '../../db/prepared.js';
import type { Executor } from '../../db/tx.js';
import type { SubscriptionStatus } from '../../db/types.js';
import { LIVE_STATUSES } from './status.js';

export interface SubscriptionFilter {
  communityId?: string;
  tierId?: string;
  memberId?: string;
  status?: SubscriptionStatus;
}

/** The subscription mirror as a creator sees it: always scoped by creator_id. */
/** How long a pause convergence run holds its community without renewing (processor calls take ≤ ~47 s). */
const PAUSE_LEASE_SECONDS = 120;

/** The columns a subscription record reads, named (a prepared statement never selects `*`). */
const SUBSCRIPTION_COLUMNS = [
  'id', 'creator_id', 'community_id', 'tier_id', 'member_id', 'status', 'price_cents', 'billing_period', 'current_period_start',
  'current_period_end', 'cancel_at_period_end', 'canceled_at', 'ended_at', 'trial_end', 'cancellation_reason', 'processor_subscription_id',
  'processor_customer_id', 'canceled_by_pause', 'canceled_by_creator', 'created_at', 'updated_at', 'scheduled_tier_id', 'scheduled_change_at',
] as const;

/** Creator reads of the mirror: compiled once per shape, prepared statements on PostgreSQL. */
const reads = compiledQueries('subscriptions', { prepare: true });

/** The filters present, as a shape name, and their values in that order (creator first). */
function filterShape(creatorId: string, f: SubscriptionFilter) {
  const present = (['communityId', 'tierId', 'memberId', 'status'] as const).filter((k) => f[k] !== undefined && f[k] !== '');
  return { shape: present.map((k) => k.replace('Id', '').toLowerCase()).join('_') || 'all', values: [creatorId, ...present.map((k) => f[k]!)], present };
}

export function createSubscriptionsRepo(db: Executor) {
  const COLUMN_OF = { communityId: 'community_id', tierId: 'tier_id', memberId: 'member_id', status: 'status' } as const;
  /** The creator's subscriptions, narrowed by the filters `present` names, their values in `values` after the creator. */
  const filtered = (trx: Executor, present: ReadonlyArray<keyof typeof COLUMN_OF>, values: readonly unknown[]) => {
    let q = trx.selectFrom('subscriptions').where('creator_id', '=', values[0] as string);
    present.forEach((k, i) => {
      q = q.where(COLUMN_OF[k], '=', values[i + 1] as string);
    });
    return q;
  };

  return {
    async find(creatorId: string, id: string, trx: Executor = db) {
      const rows = await reads.rows(trx, 'find', [creatorId, id], (c, i) =>
        trx.selectFrom('subscriptions').select(SUBSCRIPTION_COLUMNS).where('creator_id', '=', c).where('id', '=', i),
      );
      return rows[0];
    },

    /** Newest first, ties by id. */
    async list(creatorId: string, f: SubscriptionFilter & { offset: number; limit: number }, trx: Executor = db) {
      const { shape, values, present } = filterShape(creatorId, f);
      const ordered = (args: readonly unknown[]) => filtered(trx, present, args).select(SUBSCRIPTION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc');
      // A first page of a common size is its own shape with its limit in the text, so its generic plan is kept (db/prepared.ts pageWindow).
      if (plannedOnce(f.offset, f.limit)) return reads.rows(trx, `list_${shape}_first_${f.limit}`, values, (...args) => ordered(args).limit(sql.lit(f.limit)));
      return reads.rows(trx, `list_${shape}`, [...values, f.offset, f.limit], (...args) =>
        ordered(args)
          .offset(args[args.length - 2] as number)
          .limit(args[args.length - 1] as number),
      );
    },

    async count(creatorId: string, f: SubscriptionFilter, trx: Executor = db) {
      const { shape, values, present } = filterShape(creatorId, f);
      const rows = await reads.rows(trx, `count_${shape}`, values, (...args) => filtered(trx, present, args).select(sql<number>`count(*)::int`.as('n')));
      return rows[0]!.n;
    },

    async setCancellationReason(creatorId: string, id: string, reason: string, trx: Executor = db) {
      await trx.updateTable('subscriptions').set({ cancellation_reason: reason }).where('creator_id', '=', creatorId).where('id', '=', id).execute();
    },

    /**
     * Live subscriptions of a community not yet where its status wants them (convergePause):
     * paused → every one not set to cancel at period end; active → those a pause marked, and
     * creator-canceled ones a late resume lifted.
     */
    async pauseWork(creatorId: string, communityId: string, paused: boolean, afterId: string | null, limit: number) {
      let q = db
        .selectFrom('subscriptions')
        .select(['id', 'processor_subscription_id', 'cancel_at_period_end', 'canceled_by_pause', 'canceled_by_creator'])
        .where('creator_id', '=', creatorId)
        .where('community_id', '=', communityId)
        .where('status', 'in', LIVE_STATUSES)
        .where((eb) =>
          paused
            ? eb('cancel_at_period_end', '=', false)
            : eb.or([eb('canceled_by_pause', '=', true), eb.and([eb('canceled_by_creator', '=', true), eb('cancel_at_period_end', '=', false)])]),
        );
      if (afterId) q = q.where('id', '>', afterId);
      return q.orderBy('id').limit(limit).execute();
    },

    /**
     * Sets canceled_by_pause only while the community's status is still the one the change is
     * for (`paused`), and never on a creator-canceled subscription. False: nothing to do now.
     */
    async markCanceledByPause(creatorId: string, id: string, value: boolean, trx: Executor = db) {
      const row = await trx
        .updateTable('subscriptions')
        .set({ canceled_by_pause: value })
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .where('canceled_by_creator', '=', false)
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('communities as c')
              .select('c.id')
              .whereRef('c.id', '=', 'subscriptions.community_id')
              .where('c.status', '=', value ? 'paused' : 'active'),
          ),
        )
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The creator canceled it: that wins over any pause or resume from now on. */
    async markCanceledByCreator(creatorId: string, id: string, trx: Executor = db) {
      await trx.updateTable('subscriptions').set({ canceled_by_creator: true, canceled_by_pause: false }).where('creator_id', '=', creatorId).where('id', '=', id).execute();
    },

    /**
     * The single-writer lease of a community's pause convergence: taken when free or expired
     * (true); when another run holds it, that run is asked for another pass (false).
     */
    async takePauseLease(creatorId: string, communityId: string, token: string): Promise<boolean> {
      const taken = await db
        .updateTable('communities')
        .set({ pause_lease_token: token, pause_lease_until: sql<Date>`now() + make_interval(secs => ${PAUSE_LEASE_SECONDS})`, pause_rerun: false })
        .where('creator_id', '=', creatorId)
        .where('id', '=', communityId)
        .where((eb) => eb.or([eb('pause_lease_until', 'is', null), eb('pause_lease_until', '<', sql<Date>`now()`)]))
        .returning('id')
        .executeTakeFirst();
      if (taken) return true;
      await db.updateTable('communities').set({ pause_rerun: true }).where('creator_id', '=', creatorId).where('id', '=', communityId).execute();
      return false;
    },

    /** Extends the lease; false when it expired and another run took it (stop writing). */
    async renewPauseLease(communityId: string, token: string): Promise<boolean> {
      const row = await db
        .updateTable('communities')
        .set({ pause_lease_until: sql<Date>`now() + make_interval(secs => ${PAUSE_LEASE_SECONDS})` })
        .where('id', '=', communityId)
        .where('pause_lease_token', '=', token)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Frees the lease unless another pass was asked for meanwhile: then it clears the request
     * and answers false (the holder passes again, still holding it). `force` frees it anyway.
     */
    async releasePauseLease(communityId: string, token: string, force = false): Promise<boolean> {
      let q = db.updateTable('communities').set({ pause_lease_token: null, pause_lease_until: null }).where('id', '=', communityId).where('pause_lease_token', '=', token);
      if (!force) q = q.where('pause_rerun', '=', false);
      if (await q.returning('id').executeTakeFirst()) return true;
      await db.updateTable('communities').set({ pause_rerun: false }).where('id', '=', communityId).where('pause_lease_token', '=', token).execute();
      return false;
    },

    async communityStatus(creatorId: string, communityId: string) {
      const row = await db.selectFrom('communities').select('status').where('creator_id', '=', creatorId).where('id', '=', communityId).executeTakeFirst();
      return row?.status;
    },

    async insertRefund(
      creatorId: string,
      row: { id: string; subscription_id: string; amount_cents: number; currency: string; status: string; processor_refund_id: string; processor_charge_id: string | null; created_at: Date },
      trx: Executor = db,
    ) {
      // The charge.refunded webhook may have mirrored it first; either way one row per refund.
      const inserted = await trx
        .insertInto('refunds')
        .values({ ...row, creator_id: creatorId })
        .onConflict((oc) => oc.column('processor_refund_id').doNothing())
        .returning('id')
        .executeTakeFirst();
      const stored = await trx.selectFrom('refunds').selectAll().where('creator_id', '=', creatorId).where('processor_refund_id', '=', row.processor_refund_id).executeTakeFirstOrThrow();
      // inserted: this call wrote it (its refund.created is for the caller to record).
      return { ...stored, inserted: inserted !== undefined };
    },
  };
}

export type SubscriptionsRepo = ReturnType<typeof createSubscriptionsRepo>;
export type SubscriptionRow = NonNullable<Awaited<ReturnType<SubscriptionsRepo['find']>>>;
