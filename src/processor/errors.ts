/**
 * What went wrong at the payment processor, in the processor's own terms; the HTTP layer
 * (src/http/error-handler.ts) decides what each means for an API client.
 */

/**
 * A processor call failed. `refused`: the processor answered no (nothing changed there);
 * `unknown`: no answer or a processor-side error (it may have acted: retry with the same
 * key); `key_reused`: the processor holds the idempotency key for a call with other details.
 */
export class ProcessorFailure extends Error {
  constructor(
    readonly what: string,
    readonly outcome: 'refused' | 'unknown' | 'key_reused',
    /** The processor's own words, for a refusal of the request itself. */
    readonly reason?: string,
  ) {
    super(`the payment processor could not ${what} (${outcome})`);
  }
}

/** The processor declined for a reason of the business, one the caller can act on. */
export class ProcessorDeclined extends Error {
  constructor(
    readonly reason: 'balance_insufficient' | 'payouts_not_allowed' | 'charge_already_refunded' | 'amount_too_large',
    /** The processor's own words. */
    readonly detail = '',
  ) {
    super(`the payment processor declined: ${reason}`);
  }
}

/**
 * What a failed processor call means for the caller: a refusal (4xx) changed nothing; a
 * timeout, a dropped connection or a processor-side 5xx leaves it unknown whether the
 * processor acted (a retry with the same Idempotency-Key is safe: our key derives the
 * processor's, which then answers with what it did, once).
 */
export function processorFailure(what: string, err: unknown): ProcessorFailure {
  const e = err as { type?: string; message?: string; statusCode?: number };
  if (e.type === 'StripeIdempotencyError') return new ProcessorFailure(what, 'key_reused');
  const refused =
    e.type === 'StripeInvalidRequestError' ||
    e.type === 'StripeCardError' ||
    e.type === 'StripeRateLimitError' ||
    e.type === 'StripeAuthenticationError' ||
    e.type === 'StripePermissionError' ||
    (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500);
  if (refused) return new ProcessorFailure(what, 'refused', e.type === 'StripeInvalidRequestError' ? e.message : undefined);
  return new ProcessorFailure(what, 'unknown');
}

export async function guarded<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw processorFailure(what, err);
  }
}
