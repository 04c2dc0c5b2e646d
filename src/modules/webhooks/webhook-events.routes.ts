import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { adminAuth } from '../../http/auth.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import { authErrors, Int64, notFoundError, Ok, OkList, PaginationQuery } from '../../http/schemas.js';
import { iso, isoOrNull } from '../../db/tx.js';
import { AppError } from '../../http/errors.js';
import type { Inbox } from './inbox.js';
import { WebhookEvent } from './webhook-events.schemas.js';

const tags = ['Admin'];
const security = [{ adminToken: [] }];

/**
 * The operator's view of the webhook inbox: what is pending, processed, or dead (parked
 * after WEBHOOK_MAX_ATTEMPTS failures), and a way to retry the dead (CLI `webhooks retry`).
 */
export function webhookEventsRoutes(inbox: Inbox, adminToken: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('onRequest', adminAuth(adminToken));

    app.get(
      '/webhook-events',
      {
        schema: {
          tags,
          security,
          summary: 'List webhook events',
          description: 'Processor events by `status` (default `dead`), newest first (ties by id). Payloads are not shown (they hold personal data).',
          querystring: Type.Object(
            { ...PaginationQuery, status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('processed'), Type.Literal('dead')], { default: 'dead' })) },
            { additionalProperties: false },
          ),
          response: { 200: OkList(Type.Ref(WebhookEvent)), ...authErrors },
        },
      },
      async (request) => {
        const q = request.query;
        const status = q.status ?? 'dead';
        const { rows, total } = await inbox.list(status, offsetOf(q), q.limit);
        const data = rows.map((r) => ({
          id: r.id,
          type: r.type,
          account: r.account,
          status: r.dead_at ? ('dead' as const) : r.processed_at ? ('processed' as const) : ('pending' as const),
          attempts: r.attempts,
          last_error: r.last_error,
          received_at: iso(r.received_at),
          next_attempt_at: r.dead_at || r.processed_at ? null : iso(r.next_attempt_at),
          processed_at: isoOrNull(r.processed_at),
          dead_at: isoOrNull(r.dead_at),
        }));
        return paginated(data, total, q);
      },
    );

    app.post(
      '/webhook-events/retry',
      {
        schema: {
          tags,
          security,
          summary: 'Retry dead webhook events',
          description: 'Puts every dead event (or only `id`) back in the queue, due now, with a fresh set of attempts. Answers how many. An `id` that is not dead is 404.',
          querystring: Type.Object({ id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }, { additionalProperties: false }),
          response: { 200: Ok(Type.Object({ retried: Int64() })), ...authErrors, ...notFoundError },
        },
      },
      async (request) => {
        const retried = await inbox.retry(request.query.id);
        if (request.query.id && retried === 0) throw new AppError('not_found', `No dead webhook event ${request.query.id}.`);
        return { success: true as const, data: { retried } };
      },
    );
  };
}
