import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../http/errors.js';
import { errorResponse, Int64, Ok } from '../../http/schemas.js';
import type { ReplicaStatus } from '../../db/replicas.js';

const tags = ['Operations'];

const Replica = Type.Object(
  {
    name: Type.String({ maxLength: 300, description: 'host:port of the replica (DATABASE_REPLICA_URL)' }),
    state: Type.Union([Type.Literal('ok'), Type.Literal('lagging'), Type.Literal('down')], {
      description: '`ok`: heavy reads may go to it; `lagging`: further behind than REPLICA_MAX_LAG_MS, not read from; `down`: not answering (or not a standby)',
    }),
    lag_ms: Type.Union([Int64({ minimum: 0 }), Type.Null()], { description: "How far its replay is behind the primary's WAL, measured every 0.5 s; null when down" }),
  },
  { additionalProperties: false },
);

/** Liveness and readiness for load balancers and orchestrators; never rate limited, no auth. */
export function healthRoutes(ping: () => Promise<void>, replicas: () => ReplicaStatus[] = () => []): FastifyPluginAsyncTypebox {
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
          description:
            'The database answers a query within 2 seconds. 503 otherwise; it turns 200 again by itself when the database is back. `replicas` lists the read replicas (DATABASE_REPLICA_URL) and their state: one that is down or lagging does not make the node unready, since its reads fall back to the primary.',
          response: {
            200: Ok(Type.Object({ status: Type.Literal('ready'), replicas: Type.Array(Replica, { maxItems: 100 }) })),
            503: errorResponse('The database is unreachable.'),
          },
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
        return { success: true as const, data: { status: 'ready' as const, replicas: replicas().map((r) => ({ name: r.name, state: r.state, lag_ms: r.lagMs })) } };
      },
    );
  };
}
