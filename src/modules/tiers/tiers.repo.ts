import { sql } from 'kysely';
import { compiledQueries } from '../../db/compiled.js';
import type { Executor } from '../../db/tx.js';
import type { BillingPeriod } from '../../db/types.js';

export interface TierChanges {
  name?: string;
  price_cents?: number;
  billing_period?: BillingPeriod;
  trial_days?: number;
  benefits?: string[];
  is_active?: boolean;
  level?: number | null;
  processor_price_id?: string;
}

/** Every column, named (a prepared statement never selects `*`: a new column would change its result). */
const TIER_COLUMNS = [
  't.id', 't.creator_id', 't.community_id', 't.name', 't.price_cents', 't.currency', 't.billing_period', 't.trial_days', 't.benefits',
  't.is_active', 't.level', 't.processor_product_id', 't.processor_price_id', 't.created_at', 't.updated_at',
] as const;

const reads = compiledQueries('tiers', { prepare: true });

/** Tiers of one creator, every query scoped by creator_id first. */
export function createTiersRepo(db: Executor) {
  // active_subscribers is the creator metrics' counter (migrations/0018), kept by the
  // subscription mirror in its transaction: one row by key, not a count of the subscriptions.
  const withStats = (trx: Executor, creatorId: string) =>
    trx
      .selectFrom('tiers as t')
      .leftJoin('metrics_tiers as mt', (join) => join.onRef('mt.creator_id', '=', 't.creator_id').onRef('mt.tier_id', '=', 't.id'))
      .select(TIER_COLUMNS)
      .select(sql<number>`coalesce(mt.active_subscriptions, 0)`.as('active_subscribers'))
      .where('t.creator_id', '=', creatorId);

  return {
    /** The hottest read: compiled once, a prepared statement on PostgreSQL. */
    async find(creatorId: string, id: string, trx: Executor = db) {
      const rows = await reads.rows(trx, 'find', [creatorId, id], (c, i) => withStats(trx, c).where('t.id', '=', i));
      return rows[0];
    },

    /** Newest first, ties by id. */
    async list(creatorId: string, opts: { communityId?: string; isActive?: boolean; offset: number; limit: number }, trx: Executor = db) {
      let q = withStats(trx, creatorId);
      if (opts.communityId) q = q.where('t.community_id', '=', opts.communityId);
      if (opts.isActive !== undefined) q = q.where('t.is_active', '=', opts.isActive);
      return q.orderBy('t.created_at', 'desc').orderBy('t.id', 'desc').offset(opts.offset).limit(opts.limit).execute();
    },

    async count(creatorId: string, opts: { communityId?: string; isActive?: boolean }, trx: Executor = db) {
      let q = trx.selectFrom('tiers').select(sql<number>`count(*)::int`.as('n')).where('creator_id', '=', creatorId);
      if (opts.communityId) q = q.where('community_id', '=', opts.communityId);
      if (opts.isActive !== undefined) q = q.where('is_active', '=', opts.isActive);
      return (await q.executeTakeFirstOrThrow()).n;
    },

    async insert(
      creatorId: string,
      row: {
        id: string;
        community_id: string;
        name: string;
        price_cents: number;
        currency: string;
        billing_period: BillingPeriod;
        trial_days: number;
        benefits: string[];
        is_active: boolean;
        level: number | null;
        processor_product_id: string;
        processor_price_id: string;
      },
      trx: Executor = db,
    ) {
      await trx
        .insertInto('tiers')
        .values({ ...row, benefits: JSON.stringify(row.benefits), creator_id: creatorId })
        .execute();
    },

    /**
     * Applies changes only if the tier still has the price it was read with, so two
     * concurrent price changes cannot both win. Returns false when it changed meanwhile.
     */
    async update(creatorId: string, id: string, expectedPriceId: string, changes: TierChanges, trx: Executor = db) {
      const { benefits, ...rest } = changes;
      const result = await trx
        .updateTable('tiers')
        .set({ ...rest, ...(benefits ? { benefits: JSON.stringify(benefits) } : {}), updated_at: new Date() })
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .where('processor_price_id', '=', expectedPriceId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async recordPrice(
      creatorId: string,
      row: { processor_price_id: string; tier_id: string; price_cents: number; billing_period: BillingPeriod; currency: string },
      trx: Executor = db,
    ) {
      await trx
        .insertInto('tier_prices')
        .values({ ...row, creator_id: creatorId })
        .onConflict((oc) => oc.column('processor_price_id').doNothing())
        .execute();
    },
  };
}

export type TiersRepo = ReturnType<typeof createTiersRepo>;
export type TierRow = NonNullable<Awaited<ReturnType<TiersRepo['find']>>>;
