import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf, requireApiKey } from '../../http/auth.js';
import { answerInTransaction } from '../../http/idempotency.js';
import { authErrors, conflictError, errorResponse, IdParams, notFoundError, Ok, OkList } from '../../http/schemas.js';
import { CreateApiKeyBody, CreatedCreatorApiKey, CreatorApiKey, ListApiKeysQuery } from './api-keys.schemas.js';
import { MAX_LIVE_API_KEYS, withoutSecret, type ApiKeysService } from './api-keys.service.js';

const tags = ['API keys'];
const KeyRef = Type.Ref(CreatorApiKey);
/** Credentials are made and ended with an API key only (requireApiKey; the document then names creatorKey alone): a stolen session cookie must not outlive itself as a key. */
const apiKeyOnly = [{ creatorKey: [] }];
const sessionRefused = {
  403: errorResponse('A dashboard session cannot create or revoke API keys (`session_not_allowed`): use an API key with scope `full`.'),
};

/** The creator's own API keys (DESIGN §8), under the creator auth hook like every creator route. */
export function apiKeysRoutes(service: ApiKeysService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api-keys',
      {
        schema: {
          tags,
          summary: 'List your API keys',
          description: 'Every key of yours, revoked ones included, newest first (by creation time, ties by id). Secrets are never shown: only the prefix to tell keys apart.',
          querystring: ListApiKeysQuery,
          response: { 200: OkList(KeyRef), ...authErrors },
        },
      },
      async (request) => service.list(creatorOf(request), request.query),
    );

    app.post(
      '/api-keys',
      {
        schema: {
          tags,
          summary: 'Create an API key',
          security: apiKeyOnly,
          description: `A new key, shown only in this response (\`api_key\`): store it now. Scope \`full\` may do everything; \`read\` may make GET requests only (every other request is 403 \`insufficient_scope\`), for dashboards and exports that should never change anything. Older keys keep working until revoked, so keys can be rotated without downtime. Needs an API key: a dashboard session is refused (403 \`session_not_allowed\`). At most ${MAX_LIVE_API_KEYS} live keys (409 \`api_key_limit_reached\`).`,
          body: CreateApiKeyBody,
          response: { 201: Ok(CreatedCreatorApiKey), ...authErrors, ...sessionRefused, ...conflictError(`You already hold ${MAX_LIVE_API_KEYS} live keys (\`api_key_limit_reached\`): revoke one first.`) },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.create(requireApiKey(request), request.body, answerInTransaction(request, reply, withoutSecret)) }),
    );

    app.delete(
      '/api-keys/:id',
      {
        schema: {
          tags,
          summary: 'Revoke an API key',
          security: apiKeyOnly,
          description:
            'Revokes the key: requests made with it fail with 401 from the next request on (the key making this request may revoke itself). Needs an API key: a dashboard session is refused (403 `session_not_allowed`). Revoking a revoked key changes nothing and answers it with its first revocation time. Your last live key with scope `full` cannot be revoked (409 `last_full_key`): create another full key first.',
          params: IdParams,
          response: { 200: Ok(KeyRef), ...authErrors, ...sessionRefused, ...notFoundError, ...conflictError('This is your last live key with scope `full` (`last_full_key`): create another full key first.') },
        },
      },
      async (request) => ({ success: true as const, data: await service.revoke(requireApiKey(request), request.params.id) }),
    );
  };
}
