import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { DASHBOARD_HOME_PATH, DASHBOARD_SESSION_COOKIE } from '../../http/dashboard-session.js';
import { LOGIN_TOKEN_PREFIX, SIGN_IN_PATH, type SessionsService } from './sessions.service.js';

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), Path=/ (the dashboard and the API it calls), Secure when the request came over
 * HTTPS (with TRUST_PROXY, as the load balancer says). An empty value with Max-Age=0 clears it.
 */
export function sessionCookieHeader(request: FastifyRequest, token: string, maxAgeSeconds: number): string {
  return `${DASHBOARD_SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${request.protocol === 'https' ? '; Secure' : ''}`;
}

const TOKEN_PATTERN = new RegExp(`^${LOGIN_TOKEN_PREFIX}[A-Za-z0-9]{40}$`);

// Self-contained (no script, no external asset) and constant: nothing from the request is shown.
const EXPIRED_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>This sign-in link has expired or was already used</title></head>' +
  '<body style="font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#222;line-height:1.5">' +
  '<h1>This sign-in link has expired or was already used</h1>' +
  '<p>Sign-in links to the Tribes dashboard work once, for an hour. Get a new one and open it:</p><ul>' +
  '<li>on the server: <code>npm run cli -- creators login-link --email YOUR_EMAIL</code></li>' +
  '<li>with an API key: <code>POST /api/v1/dashboard/login-links</code></li></ul></body></html>';

// Lenient on purpose: a browser page answers a mangled link with the page above, not a JSON error.
const SignInQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 512 })) });

/**
 * Opening a sign-in link: spends it and sets the session cookie, then sends the browser to the
 * dashboard. A browser page, not an API operation: hidden from the OpenAPI document like the
 * onboarding pages. The token is kept out of the logs (app.ts LOG_SERIALIZERS), out of the
 * browser's cache and out of the Referer of whatever the dashboard loads next.
 */
export function signInPage(service: SessionsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      SIGN_IN_PATH,
      {
        schema: {
          hide: true,
          querystring: SignInQuery,
          response: {
            303: Type.Null({ description: `Signed in: the session cookie is set and the browser goes to ${DASHBOARD_HOME_PATH}.` }),
            400: { description: 'The link is unknown, expired or already used: an HTML page says how to get a new one.', content: { 'text/html': { schema: Type.String() } } },
          },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
        const token = request.query.token;
        const session = token && TOKEN_PATTERN.test(token) ? await service.signIn(token, request.headers['user-agent']) : undefined;
        if (!session) return reply.code(400).type('text/html; charset=utf-8').send(EXPIRED_PAGE);
        return reply.header('set-cookie', sessionCookieHeader(request, session.token, session.maxAgeSeconds)).redirect(DASHBOARD_HOME_PATH, 303);
      },
    );
  };
}
