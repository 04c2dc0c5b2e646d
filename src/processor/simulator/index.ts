import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { JobTicker } from './clock.js';
import { Core } from './core.js';
import { DEFAULT_SCHEMA, migrateSimulator as migrate } from './migrate.js';
import { registerPages } from './pages.js';
import { registerApiRoutes } from './routes.js';
import { buildServer } from './server.js';
import type { Env } from './store.js';
import { registerTestHelpers } from './test-helpers.js';

export { splitFee, refundSplit } from './fees.js';
export { signPayload } from './webhooks.js';

export interface SimulatorOptions {
  db: Kysely<any>;
  host?: string;
  /** 0 picks a free port (tests). Default 12111. */
  port?: number;
  /** Receives every event (the service's POST /api/v1/webhooks/processor). */
  webhookUrl?: string;
  webhookSecret: string;
  logger?: Logger | false;
  /** First webhook retry delay; later ones double. Default 5000 ms. */
  retryBaseDelayMs?: number;
  /**
   * PostgreSQL schema for the simulator's tables (default `processor_sim`). Tests sharing
   * one PostgreSQL database give each file its own, so their clocks stay independent.
   */
  schema?: string;
}

export interface RunningSimulator {
  url: string;
  port: number;
  /** Where events go from now on (the service's address is known only once it listens). */
  setWebhookUrl(url: string | undefined): void;
  close(): Promise<void>;
}

export async function migrateSimulator(db: Kysely<any>, schema: string = DEFAULT_SCHEMA): Promise<void> {
  await migrate(db, schema);
}

/** Migrates the simulator schema and starts its HTTP server (a Fastify instance of its own). */
export async function startSimulator(opts: SimulatorOptions): Promise<RunningSimulator> {
  const schema = opts.schema ?? DEFAULT_SCHEMA;
  await migrate(opts.db, schema);
  const logger = opts.logger ? opts.logger.child({ component: 'processor-sim' }) : undefined;
  const env: Env = {
    db: opts.db,
    schema,
    baseUrl: '',
    webhookUrl: opts.webhookUrl,
    webhookSecret: opts.webhookSecret,
    retryBaseDelayMs: opts.retryBaseDelayMs ?? 5000,
    logger,
  };
  const core = new Core(env);
  const app = buildServer(core, logger);
  registerApiRoutes(app, core);
  registerTestHelpers(app, core);
  registerPages(app, core);
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ host, port: opts.port ?? 12111 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (opts.port ?? 12111);
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  env.baseUrl = `http://${urlHost}:${port}`;
  const ticker = new JobTicker(core);
  core.deliverer.start();
  ticker.start();
  logger?.info({ url: env.baseUrl, schema, webhookUrl: opts.webhookUrl ?? null }, 'processor simulator listening');
  let closing: Promise<void> | undefined;
  return {
    url: env.baseUrl,
    port,
    setWebhookUrl: (url) => {
      env.webhookUrl = url;
    },
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await ticker.close();
        // Let in-flight work that holds the lock finish before the caller closes the database.
        await core.lock.run(async () => undefined);
        await core.deliverer.close();
      })()),
  };
}
