import { AppError } from '../../http/errors.js';
import { offsetOf } from '../../http/pagination.js';
import { iso, isoOrNull } from '../../db/tx.js';
import type { After, DirectoryFilter, DirectoryRepo, DirectoryRow, DirectorySort, SortKey } from './directory.repo.js';
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
    subscriptions: r.subscriptions.map((s) => ({ community_id: s.community_id, tier_id: s.tier_id, tier_name: s.tier_name, status: s.status, joined_at: iso(s.joined_at) })),
    engagement: {
      last_active_at: isoOrNull(r.last_active_at),
      workouts_completed_30d: r.workouts_completed_30d,
      // Members write posts and comments once the community feed exists (issue #14); none can exist before.
      posts_count_30d: 0,
      streak_days: r.streak_days,
    },
  };
}

/** The query's filters, checked beyond what the schema can say. */
function filterOf(query: ExportMembersQuery): DirectoryFilter {
  const f: DirectoryFilter = {};
  if (query.community_id) f.communityId = query.community_id;
  if (query.tier_id) f.tierId = query.tier_id;
  if (query.status) f.status = query.status;
  if (query.q !== undefined) f.q = query.q;
  if (query.joined_after) {
    const at = new Date(/T/.test(query.joined_after) ? query.joined_after : `${query.joined_after}T00:00:00Z`);
    // The pattern lets 2026-02-30 through, and Date rolls it over to March: the day must survive a round trip.
    const day = query.joined_after.slice(0, 10);
    if (Number.isNaN(at.getTime()) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
      throw new AppError('validation_error', 'joined_after is not a real date or time.', [
        { field: 'joined_after', message: 'must be a real calendar date, e.g. 2026-03-01, or date-time, e.g. 2026-03-01T12:00:00Z' },
      ]);
    }
    f.joinedAfter = at;
  }
  return f;
}

function sortOf(query: ExportMembersQuery): DirectorySort {
  const raw = query.sort ?? '-joined_at';
  return { key: raw.replace(/^-/, '') as SortKey, desc: raw.startsWith('-') };
}

export function createDirectoryService({ directory, now, exactCountLimit = 10_000 }: DirectoryDeps) {
  return {
    async list(creatorId: string, query: ListMembersQuery) {
      const f = filterOf(query);
      const at = now();
      const [rows, count] = await Promise.all([
        directory.page(creatorId, f, sortOf(query), at, { offset: offsetOf(query), limit: query.limit }),
        directory.count(creatorId, f, at, exactCountLimit),
      ]);
      return {
        success: true as const,
        data: rows.map(presentMember),
        pagination: { page: query.page, limit: query.limit, total: count.total, pages: Math.ceil(count.total / query.limit), total_is_estimate: count.estimate },
      };
    },

    /**
     * Every matching member, in batches read by keyset (each its own short statement, so an
     * export of a million rows holds no transaction or connection between batches, and memory
     * stays one batch). A member changing during the export appears once, as one batch saw them.
     */
    async *exportRows(creatorId: string, query: ExportMembersQuery, batch = 1000): AsyncGenerator<DirectoryRow[]> {
      const f = filterOf(query);
      const sort = sortOf(query);
      let after: After | undefined;
      for (;;) {
        const rows = await directory.page(creatorId, f, sort, now(), { offset: 0, limit: batch, ...(after ? { after } : {}) });
        if (rows.length) yield rows;
        if (rows.length < batch) return;
        const last = rows[rows.length - 1]!;
        after = { value: last.sort_value, memberId: last.member_id };
      }
    },
  };
}

export type DirectoryService = ReturnType<typeof createDirectoryService>;
