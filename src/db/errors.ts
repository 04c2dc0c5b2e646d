import { AppError } from '../http/errors.js';

/**
 * PostgreSQL and driver failures, translated once. Connection-level failures (server down,
 * restarting, unreachable) become 503 so clients retry; everything else stays a bug (500).
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

/** The AppError a raw database error stands for, or undefined when it is a genuine bug. */
export function translateDatabaseError(err: unknown): AppError | undefined {
  if (isDatabaseUnavailable(err)) {
    return new AppError('service_unavailable', 'The database is unavailable; retry shortly.', undefined, { 'Retry-After': '5' });
  }
  const e = err as PgLikeError | undefined;
  if (e?.code === '57014') {
    return new AppError('service_unavailable', 'The database took too long to answer; retry shortly.', undefined, { 'Retry-After': '5' });
  }
  return undefined;
}

/** Name of the unique constraint a 23505 error violated, for callers that map it to a domain conflict. */
export function uniqueViolation(err: unknown): string | undefined {
  const e = err as PgLikeError | undefined;
  if (e?.code === '23505') return typeof e.constraint === 'string' ? e.constraint : '';
  return undefined;
}
