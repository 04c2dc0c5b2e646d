/** page/limit in, `{page, limit, total, pages}` out: the one pagination of every list. */
export interface PageQuery {
  page: number;
  limit: number;
}

export interface PaginationInfo extends PageQuery {
  total: number;
  pages: number;
}

export const offsetOf = ({ page, limit }: PageQuery): number => (page - 1) * limit;

export function paginated<T>(data: T[], total: number, query: PageQuery) {
  const pagination: PaginationInfo = { page: query.page, limit: query.limit, total, pages: Math.ceil(total / query.limit) };
  return { success: true as const, data, pagination };
}
