/** page/limit in, `{page, limit, total, pages}` out: the one pagination of every list. */
export interface PageQuery {
  page: number;
  limit: number;
}

export interface PaginationInfo extends PageQuery {
  total: number;
  pages: number;
}

/**
 * The deepest page any list serves. Offset paging makes the database walk past every row
 * before the page, so depth is bounded (at most 999,900 rows skipped, at limit 100); beyond
 * it, a client narrows the list with its filters instead. Unbounded, a page like 1e20 was
 * also an offset no integer column type holds: a 500.
 */
export const MAX_PAGE = 10_000;

/** The 400 detail of a page beyond MAX_PAGE: the bound, and the way further in. */
export const PAGE_TOO_DEEP = `must be at most ${MAX_PAGE} (lists are not paged deeper); narrow the list with its filters to reach items further in`;

export const offsetOf = ({ page, limit }: PageQuery): number => (page - 1) * limit;

export function paginated<T>(data: T[], total: number, query: PageQuery) {
  const pagination: PaginationInfo = { page: query.page, limit: query.limit, total, pages: Math.ceil(total / query.limit) };
  return { success: true as const, data, pagination };
}
