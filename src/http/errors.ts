/**
 * The one error vocabulary of the API. Every failure a client can see is an AppError with
 * a code from this closed list; STATUS_BY_CODE is the only place codes meet HTTP statuses.
 */
export const STATUS_BY_CODE = {
  validation_error: 400,
  bad_request: 400,
  invalid_json: 400,
  invalid_signature: 400,
  unauthorized: 401,
  payment_declined: 402,
  forbidden: 403,
  insufficient_scope: 403,
  csrf_failed: 403,
  session_not_allowed: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  slug_taken: 409,
  email_taken: 409,
  community_paused: 409,
  tier_inactive: 409,
  subscription_canceled: 409,
  subscription_canceling: 409,
  same_tier: 409,
  already_subscribed: 409,
  already_member: 409,
  payments_not_enabled: 409,
  onboarding_required: 409,
  nothing_to_refund: 409,
  idempotency_key_reused: 409,
  idempotency_key_in_use: 409,
  last_full_key: 409,
  api_key_limit_reached: 409,
  endpoint_limit_reached: 409,
  endpoint_disabled: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  unprocessable: 422,
  amount_exceeds_refundable: 422,
  manual_payouts_disabled: 422,
  payouts_not_enabled: 422,
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

/**
 * What each code means, one line each: the error table of docs/api.md is generated from it
 * (`npm run readme:tables`), and the type makes a new code without a meaning a compile error.
 */
export const ERROR_CODE_MEANINGS: Record<ErrorCode, string> = {
  validation_error:
    'the path, query or body breaks the schema or a rule (`details` names each field); also a malformed percent-escape in the path, text PostgreSQL cannot store (a NUL, an unpaired surrogate), a page past the deepest one',
  bad_request: "Node's HTTP parser refused the request (malformed request line, header or framing); the connection closes",
  invalid_json: 'the body is not valid JSON',
  invalid_signature: 'a processor webhook whose `Stripe-Signature` is missing, matches no configured secret, or is more than 5 minutes off',
  unauthorized: 'no credential, a malformed, unknown, revoked or expired one (a dashboard session also after 12 hours unused or 14 days), one of the wrong kind for the route, or a wrong e-mail or password at login (`WWW-Authenticate: Bearer`)',
  payment_declined: "the member's card was declined for the charge the change needs (an upgrade's prorated invoice): nothing changed; update the card in the billing portal (POST /api/v1/member/billing-portal) and try again",
  forbidden: "the member may not do this: no live subscription to the community, a tier below the post's or challenge's minimum, another member's comment",
  insufficient_scope: 'the API key has scope `read` (GET requests only) and the request would change something: use a key with scope `full`',
  csrf_failed: 'a change made with the dashboard session cookie lacks an `Origin` of this server or the header `X-Tribes-CSRF: 1` (the message says which): the dashboard sends both, other sites cannot',
  session_not_allowed: 'a dashboard session may not create or revoke API keys or mint sign-in links: use an API key with scope `full`',
  not_found: 'no such resource for this caller (another creator\'s is not found either), or no such route',
  method_not_allowed: 'reserved: nothing raises it today',
  request_timeout: 'the request headers did not arrive in time; the connection closes',
  conflict: "the resource's state forbids the change, e.g. a challenge already started or finished, a poll someone voted in, a tier changed meanwhile, a duplicate exercise name",
  slug_taken: 'another community has the slug (slugs are global)',
  email_taken: 'a creator, or a member account, with this e-mail already exists',
  community_paused: 'the community is paused: no new members, tiers or challenges until it is resumed',
  tier_inactive: 'the tier is deactivated: no new subscriptions and no price change until it is reactivated',
  subscription_canceled: 'the subscription is already canceled or has ended; for a member, also a resume of one its creator canceled (the creator\'s cancel wins)',
  subscription_canceling: 'the subscription is set to cancel at the end of its period: resume it first (POST /api/v1/member/subscriptions/{id}/resume), then change its tier',
  same_tier: 'the subscription already holds this tier and no other change is scheduled',
  already_subscribed: 'the member already holds a live subscription to this tier',
  already_member: 'the member already holds a live subscription to another tier of this community: change its tier instead (POST /api/v1/member/subscriptions/{id}/change-tier)',
  payments_not_enabled: "the creator has not finished setting up payments at the processor (`charges_enabled` is false, GET /api/v1/account): no checkout until onboarding is done",
  onboarding_required: "the creator's processor dashboard opens only once onboarding was submitted (POST /api/v1/account/onboarding-link)",
  nothing_to_refund: 'the subscription has no paid invoice, or its last one is refunded in full',
  idempotency_key_reused: 'the `Idempotency-Key` was used for a request with another body (or the processor saw it with other details): use a new key',
  idempotency_key_in_use: 'another request with this `Idempotency-Key` has not answered yet; retry after `Retry-After`',
  last_full_key: "the key is the creator's last live key with scope `full`: create another full key before revoking it",
  api_key_limit_reached: 'the creator already has the most live API keys allowed (100): revoke one before creating another',
  endpoint_limit_reached: 'the creator already has the most webhook endpoints allowed (20): delete one before creating another',
  endpoint_disabled: 'the webhook endpoint is disabled, so nothing is sent to it: enable it first',
  payload_too_large: 'the body is over 1 MiB (or its chunk extensions are too large)',
  uri_too_long: 'a path segment is longer than the router accepts (every id here is a 36-character UUID)',
  unsupported_media_type: 'a body that is not `application/json`',
  unprocessable: 'reserved: nothing raises it today',
  amount_exceeds_refundable: 'the refund is larger than what remains refundable of the payment',
  manual_payouts_disabled: 'manual payouts need the payout schedule set to manual',
  payouts_not_enabled: 'the processor has disabled payouts on the creator\'s account (GET /api/v1/account says why and what it requires)',
  insufficient_balance: 'the payout is larger than the available balance (`details` says so)',
  amount_below_minimum: 'the payout is under `MANUAL_PAYOUT_MIN_CENTS`',
  rate_limited: 'over a rate limit (per caller, address, sign-ups, logins, concurrent exports); retry after `Retry-After`',
  request_header_fields_too_large: 'the request line and headers are over 16 KiB; the connection closes',
  internal_error: 'a bug on our side; the message quotes the request id to report',
  processor_error: 'the payment processor refused (nothing changed) or did not answer (it may have acted: retry with the same `Idempotency-Key`)',
  service_unavailable: 'the database is unreachable or a statement took too long; retry after `Retry-After`',
};

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
