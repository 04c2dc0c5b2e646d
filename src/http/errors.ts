/**
 * The one error vocabulary of the API. Every failure a client can see is an AppError with
 * a code from this closed list; STATUS_BY_CODE is the only place codes meet HTTP statuses.
 */
export const STATUS_BY_CODE = {
  validation_error: 400,
  /** A request Node's HTTP parser refused (malformed request line, header or framing). */
  bad_request: 400,
  invalid_json: 400,
  invalid_signature: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  slug_taken: 409,
  email_taken: 409,
  community_paused: 409,
  tier_inactive: 409,
  subscription_canceled: 409,
  already_subscribed: 409,
  nothing_to_refund: 409,
  idempotency_key_reused: 409,
  idempotency_key_in_use: 409,
  payload_too_large: 413,
  /** A path segment longer than the router accepts (every id here is a 36-character UUID). */
  uri_too_long: 414,
  unsupported_media_type: 415,
  unprocessable: 422,
  amount_exceeds_refundable: 422,
  manual_payouts_disabled: 422,
  insufficient_balance: 422,
  amount_below_minimum: 422,
  rate_limited: 429,
  request_header_fields_too_large: 431,
  internal_error: 500,
  processor_error: 502,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;
export const ERROR_CODES = Object.keys(STATUS_BY_CODE) as ErrorCode[];

export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = STATUS_BY_CODE[code];
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
