import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AccountService } from './account.service.js';
import { ONBOARDING_REFRESH_PATH, ONBOARDING_RETURN_PATH } from './account.service.js';

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title></head>` +
  `<body style="font-family:sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem"><h1>${esc(title)}</h1><p>${esc(text)}</p></body></html>`;

const LinkQuery = Type.Object({ link: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9]+$' }) }, { additionalProperties: false });

const EXPIRED = page('This link has expired', 'Onboarding links work once and for a limited time. Ask Tribes for a new one (POST /api/v1/account/onboarding-link, or your dashboard).');

/**
 * Where the processor sends a creator back from hosted onboarding (the Account Link's
 * refresh_url and return_url). Browser pages, not API operations: hidden from the OpenAPI
 * document like the checkout return pages. The token in `?link=` is kept out of the logs
 * (app.ts LOG_SERIALIZERS) and never cached by the browser.
 */
export function accountPages(service: AccountService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(ONBOARDING_REFRESH_PATH, { schema: { hide: true, querystring: LinkQuery } }, async (request, reply) => {
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      const url = await service.refreshLink(request.query.link);
      if (!url) return reply.code(410).type('text/html; charset=utf-8').send(EXPIRED);
      return reply.redirect(url, 303);
    });

    app.get(ONBOARDING_RETURN_PATH, { schema: { hide: true, querystring: LinkQuery } }, async (request, reply) => {
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      const account = await service.returned(request.query.link);
      if (!account) return reply.code(410).type('text/html; charset=utf-8').send(EXPIRED);
      const title = account.status === 'active' ? 'Payments are set up' : account.status === 'onboarding_required' ? 'Onboarding is not finished' : 'Payments setup';
      return reply.type('text/html; charset=utf-8').send(page(title, `Your payment account: ${account.summary}. You can close this tab.`));
    });
  };
}
