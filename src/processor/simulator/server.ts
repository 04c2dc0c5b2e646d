import crypto from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Core } from './core.js';
import { StripeError } from './errors.js';
import { API_VERSION } from './events.js';
import { expand } from './expand.js';
import { Params, parseForm } from './params.js';
import { findObject, newId, tbl, type Ctx } from './store.js';

export type ApiHandler = (ctx: Ctx, p: Params, params: Record<string, string>) => Promise<unknown>;

const authError = (message: string) => new StripeError(401, { type: 'invalid_request_error', message });

/** Any test-mode secret (or restricted) key, as Bearer or as HTTP Basic user (curl -u sk_test_x:). */
function authenticate(req: FastifyRequest): void {
  const header = req.headers.authorization;
  if (!header) throw authError('You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. \'Authorization: Bearer YOUR_SECRET_KEY\').');
  const [scheme, value = ''] = header.split(' ', 2);
  const key = scheme?.toLowerCase() === 'basic' ? Buffer.from(value, 'base64').toString('utf8').split(':')[0]! : scheme?.toLowerCase() === 'bearer' ? value.trim() : '';
  if (!/^(sk|rk)_test_\S+$/.test(key)) {
    const masked = key.length > 8 ? `${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}` : key;
    throw authError(`Invalid API Key provided: ${masked || '(empty)'}`);
  }
}

/** Stripe-Account must name a connected account of this platform; '' is the platform itself. */
async function resolveAccount(core: Core, req: FastifyRequest): Promise<string> {
  const raw = req.headers['stripe-account'];
  const id = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!id) return '';
  const found = /^acct_\w+$/.test(id) ? await findObject({ env: core.env, db: core.db, account: '' }, id, { type: 'account', account: '' }) : undefined;
  if (!found) {
    throw new StripeError(403, {
      type: 'invalid_request_error',
      code: 'account_invalid',
      message: `The provided key does not have access to account '${id}' (or that account does not exist). Application access may have been revoked.`,
    });
  }
  return id;
}

const requestParams = (req: FastifyRequest): Params =>
  new Params({ ...((req.query as Record<string, unknown>) ?? {}), ...(req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {}) });

/**
 * The SDK's request options (stripeAccount, idempotencyKey, ...) sent as parameters: the
 * telltale of passing options where params belong (`retrieve(id, {stripeAccount})` instead
 * of `retrieve(id, {}, {stripeAccount})`). Stripe refuses unknown parameters; so do we,
 * at least for these, so the mistake surfaces here rather than in production.
 */
const SDK_OPTION_NAMES = ['apiKey', 'idempotencyKey', 'stripeAccount', 'apiVersion', 'maxNetworkRetries', 'timeout', 'apiBase', 'stripeContext', 'headers'];

function rejectMisplacedOptions(p: Params): void {
  const wrong = SDK_OPTION_NAMES.find((k) => k in p.raw);
  if (wrong) {
    throw new StripeError(400, { type: 'invalid_request_error', code: 'parameter_unknown', param: wrong, message: `Received unknown parameter: ${wrong}` });
  }
}

const hashRequest = (req: FastifyRequest, p: Params): string =>
  crypto.createHash('sha256').update(`${req.method} ${req.url.split('?')[0]} ${JSON.stringify(p.raw)}`).digest('hex');

export function buildServer(core: Core, logger: Logger | undefined): FastifyInstance {
  // Typed as the default instance: the pino logger type differs from Fastify's base logger
  // type only nominally, and routes never touch the logger's extra methods.
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    // Stripe's nested query syntax (expand[]=a, created[gte]=1) needs qs, not querystring.
    routerOptions: { querystringParser: (s: string) => parseForm(s) },
    bodyLimit: 1_048_576,
  }) as unknown as FastifyInstance;
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, parseForm(body as string)));
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, (body as string).trim() ? JSON.parse(body as string) : {});
    } catch {
      done(new StripeError(400, { type: 'invalid_request_error', message: 'Invalid JSON body.' }), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, parseForm(body as string)));

  app.addHook('onRequest', async (_req, reply) => {
    reply.header('request-id', newId('req', 14)).header('stripe-version', API_VERSION);
  });

  app.setErrorHandler((err: unknown, req, reply) => {
    if (err instanceof StripeError) return reply.code(err.statusCode).send(err.toJSON());
    const e = err as { statusCode?: number; message?: string };
    if (e.statusCode && e.statusCode < 500) {
      return reply.code(400).send({ error: { type: 'invalid_request_error', message: e.message ?? 'Invalid request.' } });
    }
    req.log.error({ err }, 'simulator request failed');
    return reply.code(500).send({ error: { type: 'api_error', message: 'An unexpected error occurred in the processor simulator.' } });
  });

  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({ error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${req.url.split('?')[0]}).` } }),
  );
  return app;
}

/** Registers an authenticated Stripe API route. GETs read; everything else mutates. */
export function apiRoute(app: FastifyInstance, core: Core, method: 'GET' | 'POST' | 'DELETE', url: string, handler: ApiHandler): void {
  app.route({
    method,
    url,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      authenticate(req);
      const account = await resolveAccount(core, req);
      const p = requestParams(req);
      rejectMisplacedOptions(p);
      const params = req.params as Record<string, string>;
      const requestId = reply.getHeader('request-id') as string;
      if (method === 'GET') {
        return core.read(account, async (ctx) => expand(ctx, await handler(ctx, p, params), p.expand()));
      }
      const rawKey = req.headers['idempotency-key'];
      const key = (Array.isArray(rawKey) ? rawKey[0] : rawKey) || null;
      const hash = key ? hashRequest(req, p) : '';
      const scope = account || 'platform';
      const outcome = await core.lock.run(async () => {
        if (key) {
          const prior = await tbl(core).selectFrom('idempotency').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst();
          if (prior) {
            if (prior.request_hash !== hash) {
              throw new StripeError(400, {
                type: 'idempotency_error',
                message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
              });
            }
            return { replay: true, status: Number(prior.status), body: prior.body as unknown, events: [] as string[] };
          }
        }
        const { result, events } = await core.mutateLocked({ account, request: { id: requestId, idempotency_key: key } }, async (ctx) => {
          const body = await expand(ctx, await handler(ctx, p, params), p.expand());
          if (key) {
            await tbl(ctx).insertInto('idempotency').values({ scope, key, request_hash: hash, status: 200, body: JSON.stringify(body), created: ctx.now }).execute();
          }
          return body;
        });
        return { replay: false, status: 200, body: result, events };
      });
      // Ordinary API calls deliver their events in the background (Stripe is asynchronous too).
      if (outcome.events.length) void core.deliverer.deliverEvents(outcome.events);
      if (outcome.replay) reply.header('idempotent-replayed', 'true');
      return reply.code(outcome.status).send(outcome.body);
    },
  });
}
