import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { trackInFlight } from '../../http/in-flight.js';
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
 * auth hook), `drain` for the dispatcher (jobs/schedule.ts runs it every EVENTS_POLL_MS on
 * nodes that run jobs; claims do not overlap across nodes), giving way while the node serves
 * many requests, and retention. Loopback receivers only with the simulator (DESIGN §9).
 */
export function eventsFeature(app: FastifyInstance, { db, config }: { db: Db; config: Config }) {
  const allowLoopback = config.processor.kind === 'simulator';
  const endpoints = createEndpointsRepo(db);
  const sender = createSender({ allowLoopback, maxSockets: config.events.concurrency });
  // Delivery gives way to the node's own requests: a burst of logs is answered first, and its
  // events follow once it eases (at EVENTS_BUSY_RATE meanwhile, so nothing waits for ever).
  // Only nodes that send (JOBS) count their requests: an API node pays nothing for it.
  const inFlight = config.jobs ? trackInFlight(app) : () => 0;
  const dispatcher = createDispatcher({
    db,
    sender,
    concurrency: config.events.concurrency,
    busy: () => inFlight() >= config.events.busyInFlight,
    busyRate: config.events.busyRate,
  });
  let stopped = false;
  const running = new Set<Promise<number>>();
  /** Sends until nothing is due (dispatcher.ts pump); `creatorIds`: theirs only. */
  const drain = (opts: { creatorIds?: string[] } = {}) => {
    const pumping = dispatcher.pump({ stop: () => stopped, creatorIds: opts.creatorIds ?? null }).finally(() => running.delete(pumping));
    running.add(pumping);
    return pumping;
  };
  app.decorate('events', { drain, purge: () => endpoints.purge(EVENT_RETENTION_DAYS) });

  return {
    backlog: () => endpoints.backlog(),
    routes: endpointsRoutes(createEndpointsService({ db, endpoints, allowLoopback })),
    /** Claims nothing more, waits for the sends in flight to be settled, closes the sockets. */
    async stop() {
      stopped = true;
      await Promise.allSettled([...running]);
      sender.close();
    },
  };
}
