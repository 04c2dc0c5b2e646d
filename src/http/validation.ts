import { Ajv } from 'ajv';
import formatsPlugin from 'ajv-formats';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { dayInRange, instantInRange } from './dates.js';
import { AppError } from './errors.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats = ((formatsPlugin as unknown as { default?: FormatsPlugin }).default ?? formatsPlugin) as unknown as FormatsPlugin;

interface Format {
  validate: (s: string) => boolean;
  compare?: (a: string, b: string) => number | undefined;
}

function makeAjv(coerceTypes: false | 'array'): Ajv {
  const ajv = new Ajv({
    allErrors: true, // report every bad field at once, not the first
    removeAdditional: false, // unknown fields are errors, never silently dropped
    useDefaults: true,
    coerceTypes,
    strict: false,
  });
  addFormats(ajv);
  // RFC 3339 allows a leap second (…T23:59:60Z) that JavaScript dates and PostgreSQL refuse:
  // such a time is a 400 here, not a failure further in. Every date and date-time is also held
  // to the range both databases read back exactly (dates.ts), on every route, whether or not its
  // schema states the bound.
  const dateTime = ajv.formats['date-time'] as Format;
  const date = ajv.formats.date as Format;
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => dateTime.validate(s) && instantInRange(Date.parse(s)), compare: dateTime.compare });
  ajv.addFormat('date', { type: 'string', validate: (s: string) => date.validate(s) && dayInRange(s), compare: date.compare });
  return ajv;
}

/** A NUL (PostgreSQL text cannot hold one) or an unpaired UTF-16 surrogate (not Unicode: neither the database nor the processor takes it). */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|\p{Cs}/u;

/** The dotted path of the first string in `value` that cannot be stored, or undefined. Iterative: bodies may nest thousands deep. */
function unstorableText(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string' && UNSTORABLE.test(v)) return path;
    if (v && typeof v === 'object') for (const [k, child] of Object.entries(v)) stack.push([child, path ? `${path}.${k}` : k]);
  }
  return undefined;
}

/**
 * JSON bodies are validated as sent: `"price_cents": "100"` is a type error, not a number.
 * Query strings and path segments are text by nature, so there numbers and booleans are
 * coerced from their text.
 */
export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv('array');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));

  // One callback-style hook for both rules below: every request passes here, and almost all pass.
  app.addHook('preValidation', (request, _reply, done) => {
    // A path with no route is a 404 naming the path, whatever was sent to it.
    if (request.is404) return done();
    try {
      refuseUnstorableText(request);
      refuseUnexpectedBody(request);
      done();
    } catch (err) {
      done(err as Error);
    }
  });
}

/**
 * Text the database or the processor cannot take is refused here, whichever route it is sent
 * to, rather than failing (a 500, or a 502 after the processor was called) later.
 */
function refuseUnstorableText(request: FastifyRequest): void {
  for (const [where, value] of [['body', request.body], ['query string', request.query], ['path', request.params]] as const) {
    const field = unstorableText(value);
    if (field === undefined) continue;
    throw new AppError('validation_error', `The ${where} has text with a NUL character or an unpaired UTF-16 surrogate.`, [
      { field, message: 'must not contain NUL characters or unpaired surrogates' },
    ]);
  }
}

/**
 * A route that takes no body refuses one rather than ignoring it: a client sending fields
 * there has misunderstood the endpoint and should be told.
 */
function refuseUnexpectedBody(request: FastifyRequest): void {
  if (request.routeOptions.schema?.body) {
    // An omitted body is an empty object: routes whose fields are all optional can be
    // called bare, and a missing required field is still named in the 400.
    if (request.body === undefined || request.body === null) request.body = {};
    return;
  }
  const body = request.body;
  if (body === undefined || body === null) return;
  const keys = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : ['(body)'];
  if (keys.length === 0) return;
  throw new AppError(
    'validation_error',
    'This endpoint takes no request body.',
    keys.map((field) => ({ field, message: 'is not a known field' })),
  );
}
