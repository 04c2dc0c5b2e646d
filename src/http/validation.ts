import { Ajv } from 'ajv';
import formatsPlugin from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { AppError } from './errors.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats = ((formatsPlugin as unknown as { default?: FormatsPlugin }).default ?? formatsPlugin) as unknown as FormatsPlugin;

function makeAjv(coerceTypes: false | 'array'): Ajv {
  const ajv = new Ajv({
    allErrors: true, // report every bad field at once, not the first
    removeAdditional: false, // unknown fields are errors, never silently dropped
    useDefaults: true,
    coerceTypes,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
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

  // A route that takes no body refuses one rather than ignoring it: a client sending
  // fields there has misunderstood the endpoint and should be told.
  app.addHook('preValidation', async (request) => {
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
  });
}
