/**
 * PostgreSQL and driver failures, classified once (the HTTP layer maps them to statuses):
 * connection-level failures (server down, restarting, unreachable) and statement timeouts
 * are the database's; everything else is a bug of ours.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000', '08001', '08003', '08004', '08006', // connection_exception family
]);
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH']);
const UNAVAILABLE_MESSAGES = [/Connection terminated/i, /timeout exceeded when trying to connect/i, /Client has encountered a connection error/i, /embedded database is closed/i];

interface PgLikeError {
  code?: unknown;
  constraint?: unknown;
  message?: unknown;
}

export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as PgLikeError;
  if (typeof e.code === 'string' && (UNAVAILABLE_SQLSTATES.has(e.code) || UNAVAILABLE_NODE_CODES.has(e.code))) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(e.message as string))) return true;
  // pg wraps socket failures in AggregateError when several addresses were tried.
  if (err instanceof AggregateError) return err.errors.some(isDatabaseUnavailable);
  return false;
}

/**
 * What a raw database error says about the database rather than the query: unreachable
 * (down, restarting, out of connections) or too slow (the statement timeout). Undefined for
 * anything else, which is a genuine bug. The HTTP layer answers both with 503.
 */
export function databaseFailure(err: unknown): 'unavailable' | 'timeout' | undefined {
  if (isDatabaseUnavailable(err)) return 'unavailable';
  if ((err as PgLikeError | undefined)?.code === '57014') return 'timeout';
  return undefined;
}

/** Name of the unique constraint a 23505 error violated, for callers that map it to a domain conflict. */
export function uniqueViolation(err: unknown): string | undefined {
  const e = err as PgLikeError | undefined;
  if (e?.code === '23505') return typeof e.constraint === 'string' ? e.constraint : '';
  return undefined;
}
