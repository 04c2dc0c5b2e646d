import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { translateDatabaseError } from '../db/errors.js';
import { AppError, type ErrorDetail } from './errors.js';
import { answerTakenKey, KeyTaken } from './idempotency.js';

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
      return err.params.format === 'uuid' ? 'must be a UUID' : `must be a valid ${String(err.params.format)}`;
    case 'enum':
      return `must be one of: ${(err.params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(err.params.allowedValue)}`;
    default:
      return err.message ?? 'is invalid';
  }
}

export function validationDetails(errors: AjvError[]): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  for (const e of errors) {
    // anyOf/oneOf failures repeat the branch errors already listed; they add nothing.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
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

export function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  return fromFastify(err as FastifyError) ?? translateDatabaseError(err);
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.statusCode).send({
    success: false,
    error: { code: error.code, message: error.message, ...(error.details?.length ? { details: error.details } : {}) },
  });
}

export function registerErrorHandling(app: FastifyInstance): void {
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
    return sendError(
      reply,
      new AppError('internal_error', `Something went wrong on our side. Quote request id ${request.id} when reporting it.`),
    );
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`)),
  );
}
