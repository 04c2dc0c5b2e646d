import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import { Ajv } from 'ajv';
import formatsPlugin from 'ajv-formats';

/**
 * The OpenAPI document is the contract: every answer a test receives through `inject()` is
 * checked against the document the app serves at /openapi.json — its status is one the
 * operation declares, its content type one that status declares, and its headers and JSON
 * body valid against the declared schemas. The schema work is done by openapi-backend (an
 * established OpenAPI 3.1 validator on Ajv), not by code of ours; the glue below only finds
 * the operation and picks the parts to hand it. A mismatch fails the test that received it,
 * at the line that made the request.
 *
 * Answers no operation declares (the docs page, an unknown path) are not the document's to
 * check, except that an unknown path's JSON must still be the error envelope.
 */

type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats = ((formatsPlugin as unknown as { default?: FormatsPlugin }).default ?? formatsPlugin) as unknown as FormatsPlugin;

export interface Contract {
  check(request: InjectOptions, response: LightMyRequestResponse): void;
}

interface DeclaredResponse {
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, unknown>;
}

// One compiled validator per distinct document: compiling every operation's schemas takes
// a while, and every app of a run serves the same document.
const compiled = new Map<string, Promise<Contract>>();
const ofApp = new WeakMap<FastifyInstance, Promise<Contract>>();

export function contractOf(app: FastifyInstance): Promise<Contract> {
  let contract = ofApp.get(app);
  if (contract) return contract;
  const doc = app.swagger() as unknown as Document;
  const key = JSON.stringify(doc);
  contract = compiled.get(key);
  if (!contract) {
    contract = build(structuredClone(doc));
    compiled.set(key, contract);
  }
  ofApp.set(app, contract);
  return contract;
}

async function build(definition: Document): Promise<Contract> {
  const api = new OpenAPIBackend({
    definition,
    // The document itself is linted in CI (Redocly, Spectral); openapi-backend's own check of
    // it is OpenAPI 3.0's and refuses 3.1's `examples` keyword, so it is skipped ("quick",
    // which also compiles each operation's validators when first used). Strict: a document
    // it cannot dereference fails the run rather than checking nothing.
    quick: true,
    strict: true,
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv: (ajv) => addFormats(ajv as unknown as Ajv) as unknown as typeof ajv,
  });
  await api.init();
  const envelope = new Ajv({ strict: false, allErrors: true });
  addFormats(envelope);
  const schemas = (api.definition.components?.schemas ?? {}) as Record<string, object>;
  const isErrorEnvelope = envelope.compile(schemas.Error ?? { type: 'object', required: ['success', 'error'] });

  return {
    check(request, response) {
      const url = new URL(typeof request.url === 'string' ? request.url : String(request.path ?? '/'), 'http://tribes.test');
      const method = (request.method ?? 'GET').toString().toLowerCase();
      const where = `${method.toUpperCase()} ${url.pathname} → ${response.statusCode}`;
      const contentType = String(response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const query = Object.fromEntries(url.searchParams);
      const matched = api.router.matchOperation({ method, path: url.pathname, query, headers: {} }) as Operation | undefined;
      // A route without an operation id is one a test added for itself (every real one has an
      // id: test/openapi.test.ts), so it is treated like an undocumented path.
      const operation = matched?.operationId ? matched : undefined;
      if (!operation) {
        if (contentType === 'application/json' && response.statusCode >= 400 && !isErrorEnvelope(response.json())) {
          fail(where, [`an undocumented path answered JSON that is not the error envelope: ${response.body.slice(0, 300)}`]);
        }
        return;
      }
      const responses = (operation.responses ?? {}) as Record<string, DeclaredResponse>;
      const status = String(response.statusCode);
      const declared = responses[status] ?? responses[`${status[0]}XX`] ?? responses.default;
      if (!declared) fail(where, [`status ${status} is not declared for ${operation.operationId} (declared: ${Object.keys(responses).join(', ')})`]);

      const problems: string[] = [];
      const hasBody = response.rawPayload.length > 0 && method !== 'head';
      if (hasBody) {
        const types = Object.keys(declared.content ?? {});
        if (!types.length) problems.push(`a body (${contentType || 'no content type'}) was sent where the document declares none`);
        else if (!types.includes(contentType)) problems.push(`content type ${contentType || '(none)'} is not one of ${types.join(', ')}`);
        else if (contentType === 'application/json') {
          const body = api.validator.validateResponse(response.json(), operation, response.statusCode);
          for (const e of body.errors ?? []) problems.push(`body${e.instancePath || ''} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
        }
      }
      const headers = api.validator.validateResponseHeaders(response.headers, operation, { statusCode: response.statusCode, setMatchType: 'any' as never });
      for (const e of headers.errors ?? []) problems.push(`header ${e.instancePath.replace('/headers/', '')} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
      for (const [name, header] of Object.entries(resolveHeaders(api.definition, declared.headers))) {
        if (header.required && response.headers[name.toLowerCase()] === undefined) problems.push(`required header ${name} is missing`);
      }
      if (problems.length) fail(where, problems);
    },
  };
}

function resolveHeaders(doc: Document, headers: DeclaredResponse['headers'] = {}): Record<string, { required?: boolean }> {
  const components = (doc.components?.headers ?? {}) as Record<string, { required?: boolean }>;
  return Object.fromEntries(
    Object.entries(headers).map(([name, h]) => {
      const ref = (h as { $ref?: string }).$ref;
      return [name, ref ? (components[ref.split('/').pop()!] ?? {}) : h];
    }),
  );
}

function fail(where: string, problems: string[]): never {
  throw new Error(`the answer breaks the OpenAPI document (${where}):\n  - ${problems.join('\n  - ')}`);
}

/**
 * Wraps `app.inject` so every answer is checked. Only the promise form is wrapped (the one
 * the suite uses); a chained `inject()` without options is passed through unchecked.
 */
export function checkEveryAnswer(app: FastifyInstance, contract: () => Promise<Contract>): void {
  const inject = app.inject.bind(app) as (opts?: InjectOptions | string) => Promise<LightMyRequestResponse>;
  const wrapped = async (opts?: InjectOptions | string) => {
    const response = await inject(opts);
    if (opts !== undefined) {
      const request: InjectOptions = typeof opts === 'string' ? { url: opts, method: 'GET' } : opts;
      (await contract()).check(request, response);
    }
    return response;
  };
  (app as unknown as { inject: typeof wrapped }).inject = wrapped;
}
