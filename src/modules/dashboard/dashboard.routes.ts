import fs from 'node:fs/promises';
import path from 'node:path';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The creator's dashboard (issue #29): the static files `npm run build` writes to
 * dist/dashboard, served on the API's own origin so the session cookie and the API calls need
 * no CORS. One page (hash routes inside it) and its content-hashed assets: those are cached
 * for a year and sent gzipped when the browser accepts it (the build writes each .gz beside
 * its file). Browser files, not API operations: hidden from the OpenAPI document, and not
 * counted by the rate limit (like /docs); the API calls the page makes are.
 */
export const DASHBOARD_PATH = '/dashboard/';

// Everything the page loads comes from this origin; it may not be framed (clickjacking a
// cancel or refund button). Styles set through the DOM (the charts) are not inline markup.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
const ASSET = /^[A-Za-z0-9_-]{1,80}\.(js|css)$/;

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head><body style="font-family:sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem"><h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (npm start does it), then reload.</p></body></html>';

const AssetParams = Type.Object({ file: Type.String({ maxLength: 100 }) });

export function dashboardRoutes(dist: string): FastifyPluginAsyncTypebox {
  // Hashed names never change content: each is read once. Bounded by what the build wrote.
  const assets = new Map<string, { body: Buffer; gzip: Buffer | undefined }>();

  async function asset(file: string) {
    const cached = assets.get(file);
    if (cached) return cached;
    const full = path.join(dist, 'assets', file);
    const body = await fs.readFile(full).catch(() => undefined);
    if (!body) return undefined;
    const found = { body, gzip: await fs.readFile(`${full}.gz`).catch(() => undefined) };
    assets.set(file, found);
    return found;
  }

  const page = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache');
    // Read per request: tiny, and `npm run dev` rewrites it on every rebuild.
    const html = await fs.readFile(path.join(dist, 'index.html'), 'utf8').catch(() => undefined);
    if (html === undefined) return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    return reply.type('text/html; charset=utf-8').send(html);
  };

  return async (app) => {
    const options = { schema: { hide: true }, config: { rateLimit: false as const } };
    app.get('/dashboard', options, async (_request, reply) => reply.redirect(DASHBOARD_PATH, 302));
    app.get(DASHBOARD_PATH, options, page);
    app.get('/dashboard/assets/:file', { ...options, schema: { hide: true, params: AssetParams } }, async (request, reply) => {
      const { file } = request.params;
      const found = ASSET.test(file) ? await asset(file) : undefined;
      if (!found) return reply.code(404).type('text/plain; charset=utf-8').send('No such dashboard file: reload the dashboard.');
      reply
        .type(TYPES[path.extname(file)]!)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('vary', 'accept-encoding')
        .header('x-content-type-options', 'nosniff');
      const gzipOk = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
      if (gzipOk && found.gzip) return reply.header('content-encoding', 'gzip').send(found.gzip);
      return reply.send(found.body);
    });
  };
}
