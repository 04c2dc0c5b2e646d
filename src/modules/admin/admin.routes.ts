import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { adminAuth } from '../../http/auth.js';
import { authErrors, conflictError, IdParams, notFoundError, Ok, processorError } from '../../http/schemas.js';
import { ApiKey, CreateAdminApiKeyBody, CreateCreatorBody, CreatedApiKey, CreatedCreator, KeyIdParams } from './admin.schemas.js';
import type { AdminService } from './admin.service.js';
import { answerInTransaction } from '../../http/idempotency.js';
import { MAX_LIVE_API_KEYS, withoutSecret } from '../api-keys/api-keys.service.js';

const tags = ['Admin'];
const security = [{ adminToken: [] }];

/** The operator API (DESIGN §2, pinned). Authenticated by the admin token, never by creator keys. */
export function adminRoutes(service: AdminService, adminToken: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('onRequest', adminAuth(adminToken));

    app.post(
      '/creators',
      {
        schema: {
          tags,
          security,
          summary: 'Create a creator',
          description:
            "Creates a creator and its first API key. The key is shown only in this response. E-mail is unique across creators (case-insensitive); a duplicate is 409 `email_taken`. With an `Idempotency-Key`, the creator id (and so the processor's key for the connected account) derives from it: a retry after any failure finds the account the first attempt opened, never a second one. Without one, a failed local write closes the account it opened.",
          body: CreateCreatorBody,
          response: { 201: Ok(CreatedCreator), ...authErrors, ...conflictError('A creator with this e-mail exists.'), ...processorError },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.createCreator(request.body, answerInTransaction(request, reply, withoutSecret)) }),
    );

    app.get(
      '/creators/:id/api-keys',
      {
        schema: {
          tags,
          security,
          summary: "List a creator's API keys",
          description: 'Every key of the creator, oldest first, revoked ones included. Secrets are never shown.',
          params: IdParams,
          response: { 200: Ok(Type.Array(Type.Ref(ApiKey))), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.listApiKeys(request.params.id) }),
    );

    app.post(
      '/creators/:id/api-keys',
      {
        schema: {
          tags,
          security,
          summary: 'Issue another API key',
          description: `A new key for the creator, shown only in this response. Older keys keep working until revoked, so keys can be rotated without downtime. The body is optional: \`name\` (none by default) and \`scope\` (\`full\` by default; \`read\` allows GET requests only). At most ${MAX_LIVE_API_KEYS} live keys per creator (409 \`api_key_limit_reached\`).`,
          params: IdParams,
          body: CreateAdminApiKeyBody,
          response: { 201: Ok(CreatedApiKey), ...authErrors, ...notFoundError, ...conflictError(`The creator already holds ${MAX_LIVE_API_KEYS} live keys (\`api_key_limit_reached\`).`) },
        },
      },
      async (request, reply) =>
        reply.code(201).send({ success: true as const, data: await service.createApiKey(request.params.id, request.body ?? {}, answerInTransaction(request, reply, withoutSecret)) }),
    );

    app.delete(
      '/api-keys/:key_id',
      {
        schema: {
          tags,
          security,
          summary: 'Revoke an API key',
          description:
            "Revokes the key; requests made with it fail with 401 from the next request on. Revoking a revoked key changes nothing and answers 200. Unlike the creator's own route, the operator may revoke a creator's last key with scope `full` (a leaked key must always be stoppable); issue the creator another one here.",
          params: KeyIdParams,
          response: { 200: Ok(Type.Ref(ApiKey)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.revokeApiKey(request.params.key_id) }),
    );

  };
}
