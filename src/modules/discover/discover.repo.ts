import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { CommunityCategory } from '../../db/types.js';
import { containsPattern } from '../../db/like.js';

export interface DiscoverFilter {
  category?: CommunityCategory;
  q?: string;
}

/** `%`, `_` and the escape character itself match literally in a search text. */

/**
 * Public discovery: the one read across every creator, so it is not scoped by creator_id.
 * It selects only the columns discovery shows and only active public communities.
 */
export function createDiscoverRepo(db: Executor) {
  const discoverable = (trx: Executor, filter: DiscoverFilter) => {
    // Written as literal SQL so the planner matches the partial index communities_discoverable_idx.
    let q = trx.selectFrom('communities as c').where(sql<boolean>`c.status = 'active' and c.is_public`);
    if (filter.category) q = q.where('c.category', '=', filter.category);
    if (filter.q) {
      const pattern = containsPattern(filter.q);
      q = q.where((eb) => eb.or([eb('c.name', 'ilike', pattern), eb('c.description', 'ilike', pattern)]));
    }
    return q;
  };

  return {
    /** Newest first; ties on created_at broken by id so pages never overlap. */
    async list(filter: DiscoverFilter, page: { offset: number; limit: number }, trx: Executor = db) {
      return discoverable(trx, filter)
        .select(['c.id', 'c.creator_id', 'c.name', 'c.slug', 'c.description', 'c.category', 'c.cover_image_url'])
        // Unknown (a creator not read from the processor since migration 0021) counts as open: checkout confirms.
        .select(sql<boolean>`(select cr.charges_enabled is not false from creators cr where cr.id = c.creator_id)`.as('accepting_members'))
        .orderBy('c.created_at', 'desc')
        .orderBy('c.id', 'desc')
        .offset(page.offset)
        .limit(page.limit)
        .execute();
    },

    async count(filter: DiscoverFilter, trx: Executor = db) {
      return (await discoverable(trx, filter).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
    },

    /**
     * Active tiers of a page of communities, in one query. Matched on (creator_id,
     * community_id) so the tenant-first index tiers_creator_community_idx serves it.
     */
    async activeTiersOf(communities: { id: string; creator_id: string }[], trx: Executor = db) {
      if (communities.length === 0) return [];
      return trx
        .selectFrom('tiers')
        .select(['id', 'community_id', 'name', 'price_cents', 'currency', 'billing_period', 'trial_days', 'benefits', 'level', 'created_at'])
        .where((eb) =>
          eb(
            eb.refTuple('creator_id', 'community_id'),
            'in',
            communities.map((c) => eb.tuple(c.creator_id, c.id)),
          ),
        )
        .where('is_active', '=', true)
        .execute();
    },
  };
}

export type DiscoverRepo = ReturnType<typeof createDiscoverRepo>;
export type DiscoverTierRow = Awaited<ReturnType<DiscoverRepo['activeTiersOf']>>[number];
