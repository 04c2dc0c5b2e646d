/**
 * Stripe-shaped API errors. Thrown anywhere inside a request; the server turns them into
 * `{error: {...}}` with the status code Stripe uses, so the SDK raises the matching
 * StripeError subclass (StripeCardError for 402, StripeInvalidRequestError for 400/404, ...).
 */
export type StripeErrorType =
  | 'invalid_request_error'
  | 'card_error'
  | 'api_error'
  | 'authentication_error'
  | 'permission_error'
  | 'idempotency_error'
  | 'rate_limit_error';

export interface StripeErrorBody {
  type: StripeErrorType;
  message: string;
  code?: string;
  param?: string;
  decline_code?: string;
  charge?: string;
  doc_url?: string;
  request_log_url?: string;
}

export class StripeError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: StripeErrorBody,
  ) {
    super(body.message);
  }

  toJSON(): { error: StripeErrorBody } {
    return { error: this.body };
  }
}

export const invalidRequest = (message: string, param?: string, code?: string): StripeError =>
  new StripeError(400, { type: 'invalid_request_error', message, ...(code ? { code } : {}), ...(param ? { param } : {}) });

export const missingParam = (param: string): StripeError =>
  new StripeError(400, { type: 'invalid_request_error', code: 'parameter_missing', param, message: `Missing required param: ${param}.` });

export const invalidParam = (param: string, message: string): StripeError =>
  new StripeError(400, { type: 'invalid_request_error', code: 'parameter_invalid_empty', param, message });

/** Stripe's wording for an unknown id: `No such customer: 'cus_123'`. */
export const noSuch = (noun: string, id: string, param?: string): StripeError =>
  new StripeError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${noun}: '${id}'`,
    ...(param ? { param } : {}),
  });

export const cardDeclined = (declineCode: string, message: string, charge?: string): StripeError =>
  new StripeError(402, {
    type: 'card_error',
    code: 'card_declined',
    decline_code: declineCode,
    message,
    ...(charge ? { charge } : {}),
  });
