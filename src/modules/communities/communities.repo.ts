import { sql } from 'kysely';
import { compiledQueries } from '../../db/compiled.js';
import type { Executor } from '../../db/tx.js';
import type { CommunityCategory } from '../../db/types.js';

export interface CommunityWrite {
  name?: string;
  description?: string | null;
  category?: CommunityCategory;
  is_public?: boolean;
  cover_image_url?: string | null;
}

/** The columns a community record shows, named (a prepared statement never selects `*`). */
const COMMUNITY_COLUMNS = [
  'c.id', 'c.creator_id', 'c.name', 'c.slug', 'c.description', 'c.category', 'c.is_public', 'c.cover_image_url', 'c.status',
  'c.paused_at', 'c.created_at', 'c.updated_at',
] as const;

const reads = compiledQueries('communities', { prepare: true });

/**
 * Communities of one creator. Every query is scoped by creator_id first, so another
 * creator's id simply finds nothing.
 */
export function createCommunitiesRepo(db: Executor) {
  /**
   * A community row plus its live figures, from its row of the creator metrics' counters (kept
   * by the subscription mirror in its transaction; migrations/0017, 0018) rather than from its
   * subscriptions: one row by key whatever the community's size. Live members are its paying
   * members plus those only trialing.
   */
  const withStats = (trx: Executor, creatorId: string) =>
    trx
      .selectFrom('communities as c')
      .leftJoin('metrics_scopes as ms', (join) => join.onRef('ms.creator_id', '=', 'c.creator_id').onRef('ms.scope_id', '=', 'c.id'))
      .select(COMMUNITY_COLUMNS)
      .select([
        sql<number>`coalesce(ms.paying + ms.trialing, 0)`.as('members_count'),
        sql<number>`coalesce(ms.active_subscriptions, 0)`.as('active_subscribers'),
        sql<number>`coalesce(ms.mrr_cents, 0)`.as('mrr_cents'),
      ])
      .where('c.creator_id', '=', creatorId);

  return {
    /** Every community id of the creator (a creator has few). */
    async idsOf(creatorId: string): Promise<string[]> {
      return (await db.selectFrom('communities').select('id').where('creator_id', '=', creatorId).execute()).map((c) => c.id);
    },

    /** The hottest read: compiled once, a prepared statement on PostgreSQL. */
    async findWithStats(creatorId: string, id: string, trx: Executor = db) {
      const rows = await reads.rows(trx, 'find', [creatorId, id], (c, i) => withStats(trx, c).where('c.id', '=', i));
      return rows[0];
    },

    /** Newest first; ties on created_at broken by id so pages never overlap. */
    async listWithStats(
      creatorId: string,
      opts: { offset: number; limit: number; status?: 'active' | 'paused' },
      trx: Executor = db,
    ) {
      let q = withStats(trx, creatorId);
      if (opts.status) q = q.where('c.status', '=', opts.status);
      return q.orderBy('c.created_at', 'desc').orderBy('c.id', 'desc').offset(opts.offset).limit(opts.limit).execute();
    },

    /** Just the status, optionally locking the row for the rest of the transaction. */
    async findStatus(creatorId: string, id: string, trx: Executor = db, opts: { lock?: boolean } = {}) {
      let q = trx.selectFrom('communities').select(['id', 'status']).where('creator_id', '=', creatorId).where('id', '=', id);
      if (opts.lock) q = q.forUpdate();
      return q.executeTakeFirst();
    },

    async count(creatorId: string, opts: { status?: 'active' | 'paused' }, trx: Executor = db) {
      let q = trx.selectFrom('communities').select(sql<number>`count(*)::int`.as('n')).where('creator_id', '=', creatorId);
      if (opts.status) q = q.where('status', '=', opts.status);
      return (await q.executeTakeFirstOrThrow()).n;
    },

    async insert(
      creatorId: string,
      row: { id: string; slug: string; name: string; category: CommunityCategory } & CommunityWrite,
      trx: Executor = db,
    ) {
      await trx
        .insertInto('communities')
        .values({ ...row, creator_id: creatorId })
        .execute();
    },

    /** Applies the changes and locks the row; undefined when the creator has no such community. */
    async update(creatorId: string, id: string, changes: CommunityWrite, trx: Executor = db) {
      return trx
        .updateTable('communities')
        .set({ ...changes, updated_at: new Date() })
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .returning(['id', 'status'])
        .executeTakeFirst();
    },

    async setStatus(creatorId: string, id: string, status: 'active' | 'paused', trx: Executor = db) {
      return trx
        .updateTable('communities')
        .set({ status, paused_at: status === 'paused' ? new Date() : null, updated_at: new Date() })
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .where('status', '<>', status)
        .returning(['id'])
        .executeTakeFirst();
    },
  };
}

export type CommunitiesRepo = ReturnType<typeof createCommunitiesRepo>;
export type CommunityWithStats = NonNullable<Awaited<ReturnType<CommunitiesRepo['findWithStats']>>>;
