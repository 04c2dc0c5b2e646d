import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../http/errors.js';
import { errorResponse, Ok } from '../../http/schemas.js';

const tags = ['Operations'];

/** Liveness and readiness for load balancers and orchestrators; never rate limited, no auth. */
export function healthRoutes(ping: () => Promise<void>): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/health',
      {
        config: { rateLimit: false },
        schema: {
          tags,
          security: [],
          summary: 'Liveness',
          description: 'The process is up and serving HTTP. Does not touch the database.',
          response: { 200: Ok(Type.Object({ status: Type.Literal('ok') })) },
        },
      },
      async () => ({ success: true as const, data: { status: 'ok' as const } }),
    );

    app.get(
      '/ready',
      {
        config: { rateLimit: false },
        schema: {
          tags,
          security: [],
          summary: 'Readiness',
          description: 'The database answers a query within 2 seconds. 503 otherwise; it turns 200 again by itself when the database is back.',
          response: { 200: Ok(Type.Object({ status: Type.Literal('ready') })), 503: errorResponse('The database is unreachable.') },
        },
      },
      async () => {
        try {
          await Promise.race([
            ping(),
            new Promise((_, reject) => setTimeout(() => reject(new Error('database ping timed out')), 2000).unref()),
          ]);
        } catch {
          throw new AppError('service_unavailable', 'The database is unreachable.', undefined, { 'Retry-After': '5' });
        }
        return { success: true as const, data: { status: 'ready' as const } };
      },
    );
  };
}
