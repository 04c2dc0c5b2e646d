import { Type, type IntegerOptions, type TSchema } from '@sinclair/typebox';
import { EARLIEST_DAY, EARLIEST_INSTANT, LATEST_DAY, LATEST_INSTANT } from './dates.js';
import { ERROR_CODES } from './errors.js';
import { MAX_PAGE } from './pagination.js';

/** Shared schema pieces; every route builds its OpenAPI from these. */

export const Uuid = Type.String({ format: 'uuid', maxLength: 36, description: 'UUID', examples: ['0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b'] });
// 64: an RFC 3339 time is at most ~35 characters with nanoseconds and an offset.
export const Timestamp = Type.String({ format: 'date-time', maxLength: 64, description: 'ISO 8601 UTC timestamp' });

/**
 * A date-time the client sends (body, query or path): RFC 3339 with an offset, within the range
 * both databases store and read back exactly (dates.ts). The validator's `date-time` format
 * enforces the range on every route; these state it in the document, in the description and as
 * `x-format-minimum`/`x-format-maximum` (ajv-formats' formatMinimum/formatMaximum are not
 * OpenAPI 3.1 keywords: Redocly's struct rule refuses them).
 */
export const DateTimeInput = (description: string) =>
  Type.String({
    format: 'date-time',
    maxLength: 64,
    'x-format-minimum': EARLIEST_INSTANT,
    'x-format-maximum': LATEST_INSTANT,
    description: `${description} RFC 3339 with an offset, from ${EARLIEST_INSTANT} to ${LATEST_INSTANT} once in UTC (400 outside).`,
  });

/** A calendar date the client sends (YYYY-MM-DD), within the same range. */
export const DateInput = (description: string) =>
  Type.String({
    format: 'date',
    maxLength: 10,
    'x-format-minimum': EARLIEST_DAY,
    'x-format-maximum': LATEST_DAY,
    description: `${description} From ${EARLIEST_DAY} to ${LATEST_DAY} (400 outside).`,
  });

/**
 * An id the payment processor made (an account, price, subscription, refund, payout, session):
 * opaque, and at most 255 characters, the most Stripe says its ids will ever have.
 */
export const ProcessorId = (description?: string) => Type.String({ maxLength: 255, ...(description ? { description } : {}) });

/** A currency: the processor's and the database's (tiers.currency check) form, three lower-case letters. */
export const Currency = Type.String({ minLength: 3, maxLength: 3, pattern: '^[a-z]{3}$', description: 'ISO 4217 code, lower case.' });

/**
 * An integer the server computes and answers (a count, an amount in cents, a rank): a 64-bit
 * integer within JavaScript's safe range, narrowed by the caller where it knows better.
 */
export const Int64 = (options: IntegerOptions = {}) =>
  Type.Integer({ format: 'int64', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...options });

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const PaginationQuery = {
  page: Type.Integer({
    format: 'int32',
    minimum: 1,
    maximum: MAX_PAGE,
    default: 1,
    description: `Page number, from 1 to ${MAX_PAGE.toLocaleString('en-US')}; to reach items beyond that, narrow the list with its filters.`,
  }),
  limit: Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'Items per page, 1 to 100.' }),
};

export const Pagination = Type.Object(
  {
    page: Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_PAGE }),
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: 100 }),
    total: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Items matching the query across all pages.' }),
    pages: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Number of pages (0 when there are no items).' }),
  },
  { $id: 'Pagination', title: 'Pagination' },
);

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c)), { description: 'Stable machine-readable code.' }),
      message: Type.String({ description: 'What went wrong and what to do, for a person.' }),
      details: Type.Optional(
        Type.Array(
          Type.Object({
            field: Type.String({ description: 'Dotted path of the offending field, e.g. `media.0.url`.' }),
            message: Type.String(),
          }),
        ),
      ),
    }),
  },
  { $id: 'Error', title: 'Error' },
);

export const Ok = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data });
export const OkList = <T extends TSchema>(item: T) =>
  Type.Object({ success: Type.Literal(true), data: Type.Array(item, { maxItems: 100 }), pagination: Type.Ref(Pagination) });

const errorRef = (description: string) => Type.Ref(ErrorBody, { description });

/** Error responses every authenticated route can give; routes add their own on top. */
export const authErrors = {
  400: errorRef('The request failed validation; `details` names each field.'),
  401: errorRef('Missing, malformed, unknown or revoked API key.'),
  429: errorRef('Rate limited; wait `Retry-After` seconds.'),
  503: errorRef('The database is unavailable; retry later.'),
};
export const notFoundError = { 404: errorRef('No such resource for this creator.') };
export const conflictError = (description: string) => ({ 409: errorRef(description) });
export const errorResponse = errorRef;

/** 502 of a route that calls the payment processor (src/processor/processor.ts processorFailure). */
export const processorError = {
  502: errorResponse(
    'The payment processor refused the request (nothing was changed), or did not confirm it (it may have acted): retry with the same Idempotency-Key, which the processor answers with what it did, at most once.',
  ),
};
