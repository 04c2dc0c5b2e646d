import { offsetOf, paginated } from '../../http/pagination.js';
import { rankTiers } from '../tiers/tier-order.js';
import type { DiscoverRepo, DiscoverTierRow } from './discover.repo.js';
import type { DiscoverQuery } from './discover.schemas.js';

const presentTier = (t: DiscoverTierRow) => ({
  id: t.id,
  name: t.name,
  price_cents: Number(t.price_cents),
  currency: t.currency,
  billing_period: t.billing_period,
  trial_days: t.trial_days,
  benefits: t.benefits,
  level: t.level,
});

/**
 * One community's tiers, lowest first in the tier order (DESIGN §7). Tiers with equal
 * levels are equal in that order; among them the price order (the order without levels)
 * decides, so the list is stable.
 */
export function orderTiers(tiers: DiscoverTierRow[]): DiscoverTierRow[] {
  const rankable = tiers.map((t) => ({ ...t, price_cents: Number(t.price_cents), created_at: new Date(t.created_at) }));
  const rank = rankTiers(rankable);
  const byPrice = rankTiers(rankable.map((t) => ({ ...t, level: null })));
  const key = (id: string) => [rank.get(id) ?? 0, byPrice.get(id) ?? 0] as const;
  return [...tiers].sort((a, b) => {
    const [ra, pa] = key(a.id);
    const [rb, pb] = key(b.id);
    return ra - rb || pa - pb;
  });
}

export function createDiscoverService({ discover }: { discover: DiscoverRepo }) {
  return {
    /** A page of discoverable communities, each with its active tiers (one query for all of the page's tiers). */
    async list(query: DiscoverQuery) {
      const text = query.q?.trim();
      const filter = { ...(query.category ? { category: query.category } : {}), ...(text ? { q: text } : {}) };
      const [rows, total] = await Promise.all([discover.list(filter, { offset: offsetOf(query), limit: query.limit }), discover.count(filter)]);
      const tiersByCommunity = new Map<string, DiscoverTierRow[]>();
      for (const tier of await discover.activeTiersOf(rows)) {
        const list = tiersByCommunity.get(tier.community_id) ?? [];
        list.push(tier);
        tiersByCommunity.set(tier.community_id, list);
      }
      const data = rows.map((c) => ({
        id: c.id,
        name: c.name,
        slug: c.slug,
        description: c.description,
        category: c.category,
        cover_image_url: c.cover_image_url,
        accepting_members: c.accepting_members === true,
        tiers: orderTiers(tiersByCommunity.get(c.id) ?? []).map(presentTier),
      }));
      return paginated(data, total, query);
    },
  };
}

export type DiscoverService = ReturnType<typeof createDiscoverService>;
