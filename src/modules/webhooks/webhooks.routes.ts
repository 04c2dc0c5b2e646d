import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type Stripe from 'stripe';
import type { TaskRunner } from '../../jobs/tasks.js';
import { AppError } from '../../http/errors.js';
import { errorResponse, Ok } from '../../http/schemas.js';
import type { Inbox, ProcessorEvent } from './inbox.js';

/** Stripe's default: a signature older — or newer — than 5 minutes is refused. */
const TOLERANCE_SECONDS = 300;

const invalid = (why: string) => new AppError('invalid_signature', `The Stripe-Signature header is not valid: ${why}.`);

/**
 * Verifies a delivery exactly as Stripe specifies (HMAC-SHA256 over "t.raw_body"), against
 * each configured secret (several while one is being rolled; any matching `v1` passes),
 * and refuses timestamps outside ±5 minutes — the SDK alone only refuses old ones.
 */
export function verifyEvent(stripe: Stripe, raw: string, header: string | undefined, secrets: string[], nowSeconds = Math.floor(Date.now() / 1000)): ProcessorEvent {
  if (!header) throw invalid('it is missing');
  const t = Number(/(?:^|,)t=(\d+)/.exec(header)?.[1]);
  if (!Number.isFinite(t)) throw invalid('it has no timestamp');
  if (Math.abs(nowSeconds - t) > TOLERANCE_SECONDS) throw invalid('its timestamp is more than 5 minutes from now');
  for (const secret of secrets) {
    try {
      return stripe.webhooks.constructEvent(raw, header, secret, TOLERANCE_SECONDS) as unknown as ProcessorEvent;
    } catch {
      // try the next secret
    }
  }
  throw invalid('no signature matches');
}

export function webhookRoutes(deps: { stripe: Stripe; secrets: string[]; inbox: Inbox; tasks: TaskRunner }): FastifyPluginAsyncTypebox {
  return async (app) => {
    // The signature covers the exact bytes sent, so this route keeps the body as raw text.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body));

    app.post(
      '/webhooks/processor',
      {
        schema: {
          tags: ['Webhooks'],
          security: [],
          summary: 'Receive a payment-processor event',
          description:
            'Called by the payment processor (Stripe or the simulator), not by creators. The body is verified against `Stripe-Signature` (HMAC-SHA256, ±5 minutes); a verified event is recorded in the inbox by its id and acknowledged at once, then processed in the background with retries. A redelivered event is acknowledged and changes nothing; unknown event types are acknowledged and ignored.',
          // A Stripe signature is `t=…,v1=…` with one v1 per active secret: a few hundred characters.
          headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String({ maxLength: 4096 })) }),
          body: Type.String({ maxLength: 1024 * 1024, description: 'The event exactly as the processor sent it (JSON), at most 1 MiB.' }),
          response: {
            200: Ok(Type.Object({ received: Type.Literal(true), duplicate: Type.Boolean({ description: 'The event had been received before.' }) })),
            400: errorResponse('The signature is missing, does not match, or is outside the 5-minute window.'),
            503: errorResponse('The database is unavailable; the processor will retry.'),
          },
        },
      },
      async (request) => {
        const header = request.headers['stripe-signature'];
        const event = verifyEvent(deps.stripe, request.body, typeof header === 'string' ? header : undefined, deps.secrets);
        const fresh = await deps.inbox.record(event);
        if (fresh) deps.tasks.run(`event ${event.id}`, () => deps.inbox.process(event.id));
        return { success: true as const, data: { received: true as const, duplicate: !fresh } };
      },
    );
  };
}
