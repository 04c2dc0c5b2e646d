import crypto from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { databaseFailure } from '../db/errors.js';
import { ProcessorDeclined, ProcessorFailure } from '../processor/errors.js';
import { DATE_RANGE_MESSAGE, DATE_TIME_RANGE_MESSAGE } from './dates.js';
import { AppError, type ErrorDetail } from './errors.js';
import { answerTakenKey, KeyTaken } from './idempotency.js';
import { MAX_PAGE, PAGE_TOO_DEEP } from './pagination.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/media/0/url` → `media.0.url`, naming the property a `required`/`additionalProperties` error is about. */
function fieldOf(err: AjvError): string {
  const base = err.instancePath.split('/').filter(Boolean);
  if (err.keyword === 'required') base.push(String(err.params.missingProperty));
  if (err.keyword === 'additionalProperties') base.push(String(err.params.additionalProperty));
  return base.join('.');
}

function messageOf(err: AjvError): string {
  switch (err.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'format':
      if (err.params.format === 'date') return DATE_RANGE_MESSAGE;
      if (err.params.format === 'date-time') return DATE_TIME_RANGE_MESSAGE;
      return err.params.format === 'uuid' ? 'must be a UUID' : `must be a valid ${String(err.params.format)}`;
    case 'enum':
      return `must be one of: ${(err.params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(err.params.allowedValue)}`;
    case 'maximum':
      // Every list's page: say the bound, and the way to what lies beyond it.
      return err.instancePath === '/page' && err.params.limit === MAX_PAGE ? PAGE_TOO_DEEP : (err.message ?? 'is too large');
    default:
      return err.message ?? 'is invalid';
  }
}

export function validationDetails(errors: AjvError[]): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  // A number out of its range is usually out of int32/int64 too: the range says more, and alone.
  const outOfRange = new Set(errors.filter((e) => /^(exclusiveM|m)(axim|inim)um$/.test(e.keyword)).map((e) => e.instancePath));
  for (const e of errors) {
    // anyOf/oneOf failures repeat the branch errors already listed; they add nothing.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    if (e.keyword === 'format' && /^int(32|64)$/.test(String(e.params.format)) && outOfRange.has(e.instancePath)) continue;
    const detail = { field: fieldOf(e), message: messageOf(e) };
    const k = `${detail.field}|${detail.message}`;
    if (!seen.has(k)) {
      seen.add(k);
      details.push(detail);
    }
  }
  return details;
}

const LOCATION: Record<string, string> = { body: 'body', querystring: 'query string', params: 'path', headers: 'headers' };

/** Fastify's own failures (parsing, validation, limits) in the API's vocabulary. */
function fromFastify(err: FastifyError): AppError | undefined {
  if (err.validation) {
    const where = LOCATION[err.validationContext ?? 'body'] ?? 'request';
    const details = validationDetails(err.validation as unknown as AjvError[]);
    const summary = details.map((d) => (d.field ? `${d.field} ${d.message}` : d.message)).join('; ');
    return new AppError('validation_error', `The ${where} is invalid: ${summary}.`, details);
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is larger than 1 MiB.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('validation_error', 'The Content-Length header does not match the body.');
  }
  if (err instanceof SyntaxError && err.statusCode === 400) {
    return new AppError('invalid_json', 'The request body is not valid JSON.');
  }
  return undefined;
}

/**
 * The payment processor's failures: 502 when it refused or did not answer (saying which, since
 * only a refusal means nothing changed); its business refusals in the API's own codes.
 */
function fromProcessor(err: unknown): AppError | undefined {
  if (err instanceof ProcessorFailure) {
    if (err.outcome === 'key_reused') {
      return new AppError(
        'idempotency_key_reused',
        'The payment processor already acted on this Idempotency-Key for a request with other details (what it refers to changed since). Use a new key for a new request.',
      );
    }
    if (err.outcome === 'refused') {
      return new AppError('processor_error', `The payment processor refused to ${err.what}${err.reason ? `: ${err.reason}` : ''}. Nothing was changed.`);
    }
    return new AppError(
      'processor_error',
      `The payment processor did not confirm whether it could ${err.what}: it may have done it. Retry with the same Idempotency-Key; the processor then answers with what it did, and never does it twice.`,
    );
  }
  if (!(err instanceof ProcessorDeclined)) return undefined;
  switch (err.reason) {
    case 'balance_insufficient':
      return new AppError('insufficient_balance', 'The available balance is lower than the amount requested.', [{ field: 'amount_cents', message: 'exceeds the available balance' }]);
    case 'payouts_not_allowed':
      return new AppError('manual_payouts_disabled', 'Manual payouts are only possible while the payout schedule is manual.');
    case 'charge_already_refunded':
      return new AppError('nothing_to_refund', 'The last payment of this subscription has already been refunded in full.');
    case 'amount_too_large':
      return new AppError('amount_exceeds_refundable', `The amount is larger than what remains refundable: ${err.detail}`.trim(), [
        { field: 'amount_cents', message: 'exceeds the refundable amount' },
      ]);
  }
}

/** The database's own failures: 503, so clients retry. */
function fromDatabase(err: unknown): AppError | undefined {
  switch (databaseFailure(err)) {
    case 'unavailable':
      return new AppError('service_unavailable', 'The database is unavailable; retry shortly.', undefined, { 'Retry-After': '5' });
    case 'timeout':
      return new AppError('service_unavailable', 'The database took too long to answer; retry shortly.', undefined, { 'Retry-After': '5' });
    default:
      return undefined;
  }
}

export function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  return fromFastify(err as FastifyError) ?? fromProcessor(err) ?? fromDatabase(err);
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.statusCode).send({
    success: false,
    error: { code: error.code, message: error.message, ...(error.details?.length ? { details: error.details } : {}) },
  });
}

const internalError = (request: FastifyRequest) =>
  new AppError('internal_error', `Something went wrong on our side. Quote request id ${request.id} when reporting it.`);

/**
 * Fastify's `frameworkErrors`: failures of the router itself, before any route (and so any
 * hook) runs. Without it they answer Fastify's own body; X-Request-Id is set here because
 * the onSend hook that sets it elsewhere does not run for them.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      void sendError(reply, new AppError('validation_error', 'The URL path has a malformed percent-escape, or one that is not UTF-8: encode each path segment with encodeURIComponent.'));
      return;
    case 'FST_ERR_MAX_PARAM_LENGTH':
      void sendError(reply, new AppError('uri_too_long', 'A path segment is longer than the server accepts; every id in this API is a 36-character UUID.'));
      return;
  }
  request.log.error({ err: error }, 'unhandled framework error');
  void sendError(reply, toAppError(error) ?? internalError(request));
}

/** What Node's HTTP parser refused, with the statuses Node itself would answer. */
function fromClientError(err: NodeJS.ErrnoException): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('request_header_fields_too_large', `The request line and headers are over ${http.maxHeaderSize} bytes; send fewer or shorter headers.`);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('payload_too_large', 'The chunk extensions of the request body are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'The request did not arrive in time; send it again.');
    default:
      return new AppError('bad_request', 'The request is not valid HTTP/1.1.');
  }
}

/**
 * The HTTP server's `clientError`: a request Node could not parse (headers over its limit, a
 * malformed request line) is answered by Node before Fastify sees it. The answer is the error
 * envelope, written straight to the socket, which then closes. A peer that is gone (reset, or
 * its socket no longer writable) gets nothing, and a reset is not worth a log line.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, log?: FastifyBaseLogger): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // A response already under way on this connection (keep-alive) must not be cut into.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!inFlight?.headersSent) {
    const error = fromClientError(err);
    const body = JSON.stringify({ success: false, error: { code: error.code, message: error.message } });
    socket.write(
      `HTTP/1.1 ${error.statusCode} ${http.STATUS_CODES[error.statusCode]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${crypto.randomUUID()}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  log?.debug({ err }, 'client error');
  socket.destroy();
}

export function registerErrorHandling(app: FastifyInstance): void {
  // Fastify registers a clientError listener of its own (its own body); ours replaces it.
  app.server.removeAllListeners('clientError');
  app.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket, app.log));

  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof KeyTaken) {
      // The effect was rolled back: another request with this key answered first.
      try {
        return answerTakenKey(err, request, reply);
      } catch (answer) {
        return sendError(reply, answer as AppError);
      }
    }
    const appError = toAppError(err);
    if (appError) {
      if (appError.statusCode >= 500) request.log.error({ err }, appError.message);
      return sendError(reply, appError);
    }
    // A bug. Log everything, show nothing internal: the request id is the way to find it.
    request.log.error({ err }, 'unhandled error');
    return sendError(reply, internalError(request));
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`)),
  );
}
