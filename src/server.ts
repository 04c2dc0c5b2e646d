import path from 'node:path';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/open.js';
import { createReplicaSet } from './db/replicas.js';
import { seedExerciseCatalog } from './modules/exercises/seed.js';
import { adminTokenFile, resolveAdminToken } from './http/admin-token.js';
import { announce, originOf } from './http/banner.js';
import { gracefulShutdown } from './http/shutdown.js';
import { createProcessor, createStripeClient } from './processor/processor.js';
import { startSimulator, type RunningSimulator } from './processor/simulator/index.js';
import { resolveWebhookSecret } from './processor/webhook-secret.js';
import { chooseLogFormat, createLogger, startupLogger } from './logging.js';

/**
 * Start-up and graceful shutdown; everything else is built in app.ts. `--worker` (`npm run
 * worker`): the scheduled jobs without the API (config.ts worker).
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env, { worker: process.argv.includes('--worker') });
  const logFormat = chooseLogFormat(config.logFormat, process.stdout.isTTY === true);
  const logger = await createLogger({ level: config.logLevel, format: logFormat, colorize: process.stdout.isTTY === true });
  const quiet = startupLogger(logger, logFormat);
  const database = await openDatabase(config, quiet);
  // Read replicas: measured before the first request, so heavy reads can use them from the start.
  const replicas = config.replicaUrls.length
    ? createReplicaSet({ primary: database, urls: config.replicaUrls, maxLagMs: config.replicaMaxLagMs, poolMax: config.databasePoolMax, statementTimeoutMs: config.statementTimeoutMs, logger })
    : undefined;
  await replicas?.start();
  // The exercise catalog's source of truth is code (catalog.data.ts): upserted on every start.
  await seedExerciseCatalog(database.db);
  const adminToken = resolveAdminToken(config.adminToken, config.dataDir, quiet);

  // The simulator runs in this process by default, on the same database (its own schema),
  // so `npm start` alone can take a member from checkout to payout. Several nodes share one
  // `npm run processor-sim` instead (PROCESSOR_SIM_IN_PROCESS=false), and its secret file.
  let simulator: RunningSimulator | undefined;
  const webhookSecrets = (config.processor.webhookSecret ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (config.processor.kind === 'simulator') {
    const webhookSecret = resolveWebhookSecret(webhookSecrets[0], config.dataDir, quiet);
    if (webhookSecrets.length === 0) webhookSecrets.push(webhookSecret);
    if (config.processor.simInProcess) {
      simulator = await startSimulator({ db: database.db, host: config.processor.simHost, port: config.processor.simPort, webhookSecret, logger: quiet });
    }
  }
  const processor = createProcessor(createStripeClient(config.processor, simulator?.port));

  const app = await buildApp({ config, database, adminToken, logger, processor, webhookSecrets, ...(replicas ? { replicas } : {}) });
  await app.listen({ host: config.host, port: config.port });
  const origin = originOf(config.host, (app.server.address() as { port: number }).port);
  simulator?.setWebhookUrl(`${origin}/api/v1/webhooks/processor`);
  if (config.worker) logger.info({ port: (app.server.address() as { port: number }).port }, 'worker: running the scheduled jobs; HTTP answers /health, /ready and /metrics only');
  const databaseAbout = database.kind === 'pglite' ? `embedded PGlite in ${path.join(config.dataDir, 'pglite')}` : 'PostgreSQL server (DATABASE_URL)';
  announce({ origin, simulatorUrl: simulator?.url, adminTokenFile: config.adminToken ? undefined : adminTokenFile(config.dataDir), database: databaseAbout }, logFormat, logger);

  const closeBackends = async () => {
    await simulator?.close();
    await replicas?.close();
    await database.close();
  };
  const stop = gracefulShutdown(app, closeBackends, logger, config.shutdownTimeoutMs);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => void stop(signal).then((drained) => process.exit(drained ? 0 : 1)));
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
