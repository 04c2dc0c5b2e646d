import { AppError } from '../../http/errors.js';
import { EARLIEST_DAY, instantInRange, LATEST_DAY } from '../../http/dates.js';
import { offsetOf } from '../../http/pagination.js';
import type { DirectoryFilter, DirectoryRepo, DirectoryRow, DirectorySort, SortKey } from './directory.repo.js';
import type { ExportMembersQuery, ListMembersQuery } from './memberships.schemas.js';

export interface DirectoryDeps {
  directory: DirectoryRepo;
  /** The service's wall clock (status and the 30-day windows); tests move it. */
  now: () => Date;
  /** Totals are counted exactly up to this many matches, estimated above (MembersPagination). */
  exactCountLimit?: number;
}

/** The list shape of a member (spec: Member). */
export function presentMember(r: DirectoryRow) {
  return {
    id: r.member_id,
    name: r.name,
    email: r.email,
    avatar_url: r.avatar_url,
    // Already in the answer's shape (migrations/0035 writes joined_at as the API does).
    subscriptions: r.subscriptions,
    engagement: {
      last_active_at: r.last_active_at,
      workouts_completed_30d: r.workouts_completed_30d,
      posts_count_30d: r.posts_count_30d,
      streak_days: r.streak_days,
    },
  };
}

/** The query's filters, checked beyond what the schema can say. */
export function filterOf(query: ExportMembersQuery): DirectoryFilter {
  const f: DirectoryFilter = {};
  if (query.community_id) f.communityId = query.community_id;
  if (query.tier_id) f.tierId = query.tier_id;
  if (query.status) f.status = query.status;
  if (query.q !== undefined) {
    // Name and e-mail are searched each on its own (stored joined by a line break), and no name holds a control character.
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(query.q)) {
      throw new AppError('validation_error', 'q must not contain control characters.', [{ field: 'q', message: 'must not contain control characters (line breaks, tabs)' }]);
    }
    f.q = query.q;
  }
  if (query.joined_after) {
    const at = new Date(/T/.test(query.joined_after) ? query.joined_after : `${query.joined_after}T00:00:00Z`);
    // The pattern lets 2026-02-30 through, and Date rolls it over to March: the day must survive a round trip.
    const day = query.joined_after.slice(0, 10);
    // The range every date input is held to (src/http/dates.ts), in UTC once the offset is applied.
    const inRange = instantInRange(at.getTime());
    if (Number.isNaN(at.getTime()) || !inRange || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
      throw new AppError('validation_error', 'joined_after is not a real date or time.', [
        { field: 'joined_after', message: `must be a real calendar date, e.g. 2026-03-01, or date-time, e.g. 2026-03-01T12:00:00Z, between ${EARLIEST_DAY} and ${LATEST_DAY} once in UTC` },
      ]);
    }
    f.joinedAfter = at;
  }
  return f;
}

export function sortOf(query: ExportMembersQuery): DirectorySort {
  const raw = query.sort ?? '-joined_at';
  return { key: raw.replace(/^-/, '') as SortKey, desc: raw.startsWith('-') };
}

export function createDirectoryService({ directory, now, exactCountLimit = 10_000 }: DirectoryDeps) {
  return {
    async list(creatorId: string, query: ListMembersQuery) {
      const f = filterOf(query);
      const at = now();
      const offset = offsetOf(query);
      const { rows, total: kept } = await directory.page(creatorId, f, sortOf(query), at, { offset, limit: query.limit });
      // A page that is not full (and not past the end) says the total by itself; a whole scope's
      // came with the page (kept); otherwise count.
      const count =
        rows.length < query.limit && (rows.length > 0 || offset === 0)
          ? { total: offset + rows.length, estimate: false }
          : kept !== undefined
            ? { total: kept, estimate: false }
            : await directory.count(creatorId, f, at, exactCountLimit);
      // An estimate never claims fewer members than the pages already shown.
      const total = rows.length ? Math.max(count.total, offset + rows.length) : count.total;
      return {
        success: true as const,
        data: rows.map(presentMember),
        pagination: { page: query.page, limit: query.limit, total, pages: Math.ceil(total / query.limit), total_is_estimate: count.estimate },
      };
    },
  };
}

export type DirectoryService = ReturnType<typeof createDirectoryService>;
