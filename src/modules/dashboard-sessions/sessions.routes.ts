import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { adminAuth, creatorOf, DASHBOARD_CSRF_HEADER, requireApiKey } from '../../http/auth.js';
import { answerInTransaction, withoutUrl } from '../../http/idempotency.js';
import { authErrors, errorResponse, IdParams, notFoundError, Ok, OkList } from '../../http/schemas.js';
import { Type } from '@sinclair/typebox';
import { AdminLoginLink, AdminLoginLinkBody, DashboardSession, ListSessionsQuery, LoginLink } from './sessions.schemas.js';
import type { SessionsService } from './sessions.service.js';
import { sessionCookieHeader } from './sign-in.page.js';

const tags = ['Dashboard sessions'];
const SessionRef = Type.Ref(DashboardSession);

const HOW_IT_WORKS = `Open the link in a browser: it works once and for an hour, and signs that browser in to the dashboard (\`/dashboard/\`) with an \`HttpOnly; SameSite=Strict\` session cookie, \`tribes_session\` (\`Secure\` over HTTPS). A session acts for the creator with scope \`full\`, ends after 12 hours without use or 14 days after sign-in, and shares the creator's rate limit. A change made with the cookie (any method but GET and HEAD) must carry \`Origin\` of this server and \`${DASHBOARD_CSRF_HEADER}: 1\`, or it is 403 \`csrf_failed\`. A session may not create or revoke API keys or mint sign-in links (403 \`session_not_allowed\`). The link is never stored or logged: an Idempotency-Key replay answers \`url: null\`.`;

/** The session making the request, if it is one (the dashboard's own), to mark `current`. */
const currentSession = (request: FastifyRequest): string | undefined =>
  request.principal?.kind === 'creator' && request.principal.via === 'session' ? request.principal.credentialId : undefined;

/** The creator's side (DESIGN §8): mint a sign-in link with an API key; list and end dashboard sessions. */
export function sessionsRoutes(service: SessionsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/dashboard/login-links',
      {
        schema: {
          tags,
          summary: 'Make a sign-in link to the dashboard',
          // An API key only (requireApiKey): a session must not mint itself successors.
          security: [{ creatorKey: [] }],
          description: `A one-time sign-in link to the creator's dashboard. ${HOW_IT_WORKS} Needs an API key with scope \`full\`.`,
          response: {
            201: Ok(LoginLink),
            ...authErrors,
            403: errorResponse('A dashboard session cannot mint sign-in links (`session_not_allowed`): use an API key with scope `full`.'),
          },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.mintLink(requireApiKey(request), answerInTransaction(request, reply, withoutUrl)) }),
    );

    app.get(
      '/dashboard/sessions',
      {
        schema: {
          tags,
          summary: 'List your dashboard sessions',
          description:
            'The dashboard sessions that still work (not signed out, used within 12 hours, within 14 days of sign-in), newest first (by sign-in time, ties by id). `current` marks the session making the request. Tokens are never shown.',
          querystring: ListSessionsQuery,
          response: { 200: OkList(SessionRef), ...authErrors },
        },
      },
      async (request) => service.list(creatorOf(request), currentSession(request), request.query),
    );

    app.delete(
      '/dashboard/sessions/:id',
      {
        schema: {
          tags,
          summary: 'Sign out a dashboard session',
          description:
            "Ends the session: its cookie fails with 401 from the next request on. An API key or a session may end any of the creator's sessions; ending the session making the request also clears its cookie (`Max-Age=0`). Ending an ended session changes nothing and answers it with its first revocation time.",
          params: IdParams,
          response: { 200: Ok(SessionRef), ...authErrors, ...notFoundError },
        },
      },
      async (request, reply) => {
        const current = currentSession(request);
        const session = await service.revoke(creatorOf(request), request.params.id, current);
        if (session.current) reply.header('set-cookie', sessionCookieHeader(request, '', 0));
        return { success: true as const, data: session };
      },
    );
  };
}

/** The operator's way to sign a creator in (DESIGN §2): by e-mail, under the admin token. */
export function adminLoginLinkRoutes(service: SessionsService, adminToken: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('onRequest', adminAuth(adminToken));
    app.post(
      '/login-links',
      {
        schema: {
          tags: ['Admin'],
          security: [{ adminToken: [] }],
          summary: "Make a sign-in link to a creator's dashboard",
          description: `A one-time sign-in link for the creator with this e-mail (case-insensitive; 404 when none has it), to hand to the creator. ${HOW_IT_WORKS} Also \`npm run cli -- creators login-link --email EMAIL\`.`,
          body: AdminLoginLinkBody,
          response: { 201: Ok(AdminLoginLink), ...authErrors, 404: errorResponse('No creator has this e-mail.') },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.mintLinkByEmail(request.body.email, answerInTransaction(request, reply, withoutUrl)) }),
    );
  };
}
