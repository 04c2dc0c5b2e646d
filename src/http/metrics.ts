import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReplicaSet, ReplicaStatus } from '../db/replicas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** An observer of one group-committed statement's batch sizes (metric db_batch_size). */
    batchSizeMetric(statement: string): (size: number) => void;
    /** A gauge read when /metrics is scraped (a count kept in the database, say). */
    gaugeMetric(name: string, help: string, read: () => Promise<number>): void;
    metricsRegistry: Registry;
  }
}

/**
 * How many requests each group-committed statement served (src/db/combiner.ts): a size per
 * batch, labelled by statement. Mean near 1 under load means batching is not happening.
 */
function batchSizes(registry: Registry): (statement: string) => (size: number) => void {
  const histogram = new Histogram({
    name: 'db_batch_size',
    help: 'Requests served by one group-committed database statement',
    labelNames: ['statement'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [registry],
  });
  return (statement) => (size) => histogram.observe({ statement }, size);
}

/**
 * Prometheus metrics on GET /metrics: request count and latency by route template (never
 * the raw URL, whose ids would explode the label space), method and status.
 */
export function registerMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  app.decorate('metricsRegistry', registry);
  app.decorate('batchSizeMetric', batchSizes(registry));
  app.decorate('gaugeMetric', (name: string, help: string, read: () => Promise<number>) => {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(await read());
      },
    });
  });
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests served', labelNames, registers: [registry] });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency in seconds',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  // The labelled children per method, route and status, made once: prom-client would otherwise
  // hash the label object on every request. Bounded: routes are templates, statuses few.
  const children = new Map<string, { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof latency.labels> }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = children.get(key);
    if (!child) {
      const labels = { method: request.method, route, status_code: String(reply.statusCode) };
      children.set(key, (child = { count: requests.labels(labels), time: latency.labels(labels) }));
    }
    child.count.inc();
    child.time.observe(reply.elapsedTime / 1000);
    done();
  });

  app.get(
    '/metrics',
    { schema: { hide: true }, config: { rateLimit: false } },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
  return registry;
}

/** Each read replica's state and lag (db/replicas.ts), labelled by its host:port. */
export function registerReplicaMetrics(app: FastifyInstance, replicas: ReplicaSet): void {
  const registers = [app.metricsRegistry];
  new Gauge({
    name: 'replica_up',
    help: 'A read replica answers and is within REPLICA_MAX_LAG_MS (1), answers but lags past it (0.5: not read from), or does not answer (0)',
    labelNames: ['replica'],
    registers,
    collect() {
      for (const r of replicas.statuses()) this.set({ replica: r.name }, r.state === 'ok' ? 1 : r.state === 'lagging' ? 0.5 : 0);
    },
  });
  // Counted by the replica set; copied into Prometheus counters when scraped.
  for (const [name, help, count] of [
    ['replica_reads_total', 'Requests this node routed to a read replica', (r: ReplicaStatus) => r.reads],
    ['replica_failed_reads_total', 'Reads a replica failed under (each read again on the primary)', (r: ReplicaStatus) => r.failedReads],
  ] as const) {
    new Counter({
      name,
      help,
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const r of replicas.statuses()) this.inc({ replica: r.name }, count(r));
      },
    });
  }
  new Gauge({
    name: 'replica_lag_ms',
    help: "How far a read replica's replay is behind the primary's WAL, in ms (-1: not answering)",
    labelNames: ['replica'],
    registers,
    collect() {
      for (const r of replicas.statuses()) this.set({ replica: r.name }, r.lagMs ?? -1);
    },
  });
}
