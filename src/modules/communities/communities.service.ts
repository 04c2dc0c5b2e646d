import type { Db } from '../../db/client.js';
import { uniqueViolation } from '../../db/errors.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, isoOrNull, type Executor, type StoredAnswer } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import type { CommunitiesRepo, CommunityWithStats } from './communities.repo.js';
import type { CreateCommunityBody, ListCommunitiesQuery, UpdateCommunityBody } from './communities.schemas.js';

export const presentCommunity = (c: CommunityWithStats) => ({
  id: c.id,
  name: c.name,
  slug: c.slug,
  description: c.description,
  category: c.category,
  is_public: c.is_public,
  cover_image_url: c.cover_image_url,
  status: c.status,
  members_count: c.members_count ?? 0,
  active_subscribers: c.active_subscribers ?? 0,
  mrr_cents: Number(c.mrr_cents ?? 0),
  paused_at: isoOrNull(c.paused_at),
  created_at: iso(c.created_at),
  updated_at: iso(c.updated_at),
});

export type Community = ReturnType<typeof presentCommunity>;

export interface CommunitiesDeps {
  db: Db;
  communities: CommunitiesRepo;
  /**
   * Called after a pause or resume is committed, to carry it to the processor's
   * subscriptions (in the background: a community may have very many).
   */
  onPauseChanged?: (creatorId: string, communityId: string, paused: boolean) => void;
}

export function createCommunitiesService({ db, communities, onPauseChanged }: CommunitiesDeps) {
  async function load(creatorId: string, id: string, trx: Executor = db) {
    const row = await communities.findWithStats(creatorId, id, trx);
    if (!row) throw notFound('Community');
    return presentCommunity(row);
  }

  return {
    get: load,

    async list(creatorId: string, query: ListCommunitiesQuery) {
      const filter = query.status ? { status: query.status } : {};
      const [rows, total] = await Promise.all([
        communities.listWithStats(creatorId, { ...filter, offset: offsetOf(query), limit: query.limit }),
        communities.count(creatorId, filter),
      ]);
      return paginated(rows.map(presentCommunity), total, query);
    },

    async create(creatorId: string, input: CreateCommunityBody, answer?: StoredAnswer<Community>) {
      const id = newId();
      try {
        return await inTransaction(db, answer, async (trx) => {
          await communities.insert(creatorId, { ...input, id, name: input.name.trim() }, trx);
          return load(creatorId, id, trx);
        });
      } catch (err) {
        if (uniqueViolation(err) === 'communities_slug_key') {
          throw new AppError('slug_taken', `The slug "${input.slug}" is already in use; choose another.`, [
            { field: 'slug', message: 'is already taken' },
          ]);
        }
        throw err;
      }
    },

    async update(creatorId: string, id: string, changes: UpdateCommunityBody) {
      return db.transaction().execute(async (trx) => {
        const updated = await communities.update(creatorId, id, { ...changes, ...(changes.name ? { name: changes.name.trim() } : {}) }, trx);
        if (!updated) throw notFound('Community');
        return load(creatorId, id, trx);
      });
    },

    /**
     * DELETE is a soft delete: the community is paused, hidden from discovery and closed to
     * new subscriptions; live subscriptions are set to cancel at the end of their period
     * (honoured until then). Pausing a paused community changes nothing.
     */
    async pause(creatorId: string, id: string) {
      const { community, changed } = await db.transaction().execute(async (trx) => {
        const changed = await communities.setStatus(creatorId, id, 'paused', trx);
        return { community: await load(creatorId, id, trx), changed };
      });
      if (changed) onPauseChanged?.(creatorId, id, true);
      return community;
    },

    /** Reactivates, and lifts the cancel-at-period-end that the pause set (not members' own). */
    async resume(creatorId: string, id: string, answer?: StoredAnswer<Community>) {
      let changed = false;
      const community = await inTransaction(db, answer, async (trx) => {
        changed = Boolean(await communities.setStatus(creatorId, id, 'active', trx));
        return load(creatorId, id, trx);
      });
      if (changed) onPauseChanged?.(creatorId, id, false);
      return community;
    },
  };
}

export type CommunitiesService = ReturnType<typeof createCommunitiesService>;
