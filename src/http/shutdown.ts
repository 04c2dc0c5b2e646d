import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/**
 * Graceful stop for SIGTERM: stop accepting connections, let the requests already running
 * finish (Fastify answers 503 to new requests on kept-alive connections meanwhile), then
 * close the database. Resolves true when drained in time, false when the deadline passed.
 */
export function gracefulShutdown(app: FastifyInstance, closeDatabase: () => Promise<void>, logger: Logger, timeoutMs: number) {
  let stopping: Promise<boolean> | undefined;
  return (signal: string): Promise<boolean> => {
    stopping ??= (async () => {
      logger.info({ signal }, 'shutting down: draining in-flight requests');
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const drained = await Promise.race([app.close().then(() => true as const), deadline]);
      clearTimeout(timer);
      if (!drained) logger.error({ timeoutMs }, 'in-flight requests did not finish in time');
      await closeDatabase().catch((err: unknown) => logger.error({ err }, 'closing the database failed'));
      if (drained) logger.info('shutdown complete');
      return drained;
    })();
    return stopping;
  };
}
