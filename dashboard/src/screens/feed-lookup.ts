import { api, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';

export type Post = Schemas['Post'];
export type Tier = Schemas['Tier'];
export type Community = Schemas['Community'];

/** The names a post refers to by id: its community and its minimum tier. */
export interface Lookup {
  communities: Community[];
  tiers: Map<string, Tier>;
}

type Page<T> = { data: T[]; pagination: { pages: number } };

/** Every page of a list (a creator has a handful of communities and tiers; 100 a page). */
async function everything<T>(read: (page: number) => Promise<Page<T>>): Promise<T[]> {
  const first = await read(1);
  const rest = await Promise.all(Array.from({ length: Math.max(0, first.pagination.pages - 1) }, (_, i) => read(i + 2)));
  return [first, ...rest].flatMap((p) => p.data);
}

export async function loadLookup(): Promise<Lookup> {
  const [communities, tiers] = await Promise.all([
    everything(async (page) => ok(await api.GET('/api/v1/communities', { params: { query: { page, limit: 100 } } }))),
    everything(async (page) => ok(await api.GET('/api/v1/tiers', { params: { query: { page, limit: 100 } } }))),
  ]);
  return { communities, tiers: new Map(tiers.map((t) => [t.id, t])) };
}

/** Who reads a post in full, as the API rules it: its tier or a higher one, or everyone. */
export function lockLabel(post: Post, tiers: Map<string, Tier>): string {
  if (!post.tier_min_id) return 'Everyone';
  const tier = tiers.get(post.tier_min_id);
  return tier ? `${tier.name} and above` : 'A tier and above';
}

/** A tier as the composer's select names it: its name, and whether it still takes members. */
export const tierOptionLabel = (t: Tier) => (t.is_active ? t.name : `${t.name} (closed to new members)`);
