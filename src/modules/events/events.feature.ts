import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { every } from '../../jobs/tasks.js';
import { createDispatcher } from './dispatcher.js';
import { createEndpointsRepo } from './endpoints.repo.js';
import { endpointsRoutes } from './endpoints.routes.js';
import { createEndpointsService, EVENT_RETENTION_DAYS } from './endpoints.service.js';
import { createSender } from './sender.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Outgoing events: `drain()` sends what is due now, all or `creatorIds`' (tests; the poller does it otherwise). */
    events: { drain(opts?: { creatorIds?: string[] }): Promise<number>; purge(): Promise<number> };
  }
}

/**
 * Outgoing events, wired: the endpoints API (registered by the caller under the creator
 * auth hook), the dispatcher polling for due deliveries every EVENTS_POLL_MS on every node
 * (claims do not overlap across nodes), and retention. Loopback receivers only with the
 * simulator (DESIGN §9).
 */
export function eventsFeature(app: FastifyInstance, { db, config, logger }: { db: Db; config: Config; logger: Logger }) {
  const allowLoopback = config.processor.kind === 'simulator';
  const endpoints = createEndpointsRepo(db);
  const sender = createSender({ allowLoopback, maxSockets: config.events.concurrency });
  const dispatcher = createDispatcher({ db, sender, concurrency: config.events.concurrency });
  let stopped = false;
  /** Sends until nothing is due (dispatcher.ts pump); `creatorIds`: theirs only. */
  const drain = (opts: { creatorIds?: string[] } = {}) => dispatcher.pump({ stop: () => stopped, creatorIds: opts.creatorIds ?? null });
  app.decorate('events', { drain, purge: () => endpoints.purge(EVENT_RETENTION_DAYS) });

  const stopPolling = config.events.pollMs > 0 ? every(config.events.pollMs, drain, logger, 'outgoing events') : async () => {};
  return {
    backlog: () => endpoints.backlog(),
    routes: endpointsRoutes(createEndpointsService({ db, endpoints, allowLoopback })),
    async stop() {
      stopped = true;
      await stopPolling();
      sender.close();
    },
  };
}
