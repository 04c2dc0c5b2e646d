import type { paths } from '../api/openapi.js';
import { navigate, parseHash, type Route } from '../router.js';

/** The list's query as the API takes it; the export takes the same filters without paging. */
export type ListQuery = NonNullable<paths['/api/v1/members']['get']['parameters']['query']>;
export type MemberStatus = NonNullable<ListQuery['status']>;
export type Sort = NonNullable<ListQuery['sort']>;

export const STATUSES: Array<{ value: MemberStatus; label: string }> = [
  { value: 'active', label: 'Active' },
  { value: 'trial', label: 'On trial' },
  { value: 'at_risk', label: 'At risk' },
  { value: 'churned', label: 'Churned' },
];

export const SORTS: Array<{ value: Sort; label: string }> = [
  { value: '-joined_at', label: 'Newest members first' },
  { value: 'joined_at', label: 'Oldest members first' },
  { value: '-last_active_at', label: 'Recently active first' },
  { value: 'last_active_at', label: 'Least recently active first' },
  { value: 'name', label: 'Name, A to Z' },
  { value: '-name', label: 'Name, Z to A' },
];

export const PAGE_SIZE = 25;

/**
 * The filters as the hash holds them (#/members?status=at_risk&q=ana), named as the API names
 * them so a shared link reads the same on both. Values the API would refuse are dropped here
 * rather than shown as a validation error for a hand-edited link.
 */
export interface Filters {
  community_id: string;
  tier_id: string;
  status: MemberStatus | '';
  joined_after: string;
  q: string;
  sort: Sort;
  page: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function readFilters(route: Route): Filters {
  const get = (name: string) => route.query.get(name) ?? '';
  const status = STATUSES.find((s) => s.value === get('status'))?.value ?? '';
  const sort = SORTS.find((s) => s.value === get('sort'))?.value ?? '-joined_at';
  const page = Math.min(10_000, Math.max(1, Math.floor(Number(get('page')) || 1)));
  return {
    community_id: UUID.test(get('community_id')) ? get('community_id') : '',
    tier_id: UUID.test(get('tier_id')) ? get('tier_id') : '',
    status,
    joined_after: DAY.test(get('joined_after')) ? get('joined_after') : '',
    q: get('q').trim().slice(0, 200),
    sort,
    page,
  };
}

/**
 * Changes some filters: any change other than the page goes back to page 1. The others are
 * read from the hash as it is now, not from the render that set up the handler: the search
 * box writes 300 ms after the last key, and a chip clicked meanwhile must not be undone.
 */
export function setFilters(patch: Partial<Filters>) {
  const next = { ...readFilters(parseHash(location.hash)), page: 1, ...patch };
  navigate('members', {
    community_id: next.community_id,
    tier_id: next.tier_id,
    status: next.status,
    joined_after: next.joined_after,
    q: next.q,
    sort: next.sort === '-joined_at' ? '' : next.sort,
    page: next.page > 1 ? next.page : '',
  });
}

/** The API's query for these filters (empty ones left out; no paging: the export's query). */
export function apiFilters(f: Filters): Omit<ListQuery, 'page' | 'limit'> {
  return {
    ...(f.community_id ? { community_id: f.community_id } : {}),
    ...(f.tier_id ? { tier_id: f.tier_id } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(f.joined_after ? { joined_after: f.joined_after } : {}),
    ...(f.q ? { q: f.q } : {}),
    sort: f.sort,
  };
}

/**
 * The list as last shown (its hash, filters and page included), so "All members" on a member's
 * page goes back to the same filtered list. Kept for this page's life only, like the hash.
 */
let lastList = '#/members';
export const rememberList = (hash: string) => void (lastList = hash);
export const listHref = () => lastList;
