import path from 'node:path';
import { pino } from 'pino';
import { connectPostgres, openPglite, type DatabaseHandle } from '../db/client.js';
import { startSimulator } from './simulator/index.js';
import { resolveWebhookSecret } from './webhook-secret.js';

/**
 * `npm run processor-sim`: the Stripe-compatible processor simulator on its own.
 *
 * PROCESSOR_SIM_HOST / PROCESSOR_SIM_PORT  where it listens (127.0.0.1:12111)
 * DATABASE_URL                             PostgreSQL (schema processor_sim); else PGlite in $DATA_DIR/processor-sim
 * STRIPE_WEBHOOK_SECRET                    signing secret; generated into $DATA_DIR/processor-webhook-secret when unset
 * PROCESSOR_WEBHOOK_URL                    where events go (http://127.0.0.1:3000/api/v1/webhooks/processor)
 */

function portFrom(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 12111;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PROCESSOR_SIM_PORT must be an integer 0..65535, got "${raw}"`);
  return port;
}

async function main(): Promise<void> {
  const logger = pino({ level: process.env.LOG_LEVEL || 'info' });
  const dataDir = path.resolve(process.env.DATA_DIR || './data');
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const database: DatabaseHandle = databaseUrl
    ? connectPostgres({ url: databaseUrl, poolMax: 5, statementTimeoutMs: 15_000, logger })
    : await openPglite({ dataDir: path.join(dataDir, 'processor-sim') });
  const sim = await startSimulator({
    db: database.db,
    host: process.env.PROCESSOR_SIM_HOST || '127.0.0.1',
    port: portFrom(process.env.PROCESSOR_SIM_PORT),
    webhookUrl: process.env.PROCESSOR_WEBHOOK_URL || 'http://127.0.0.1:3000/api/v1/webhooks/processor',
    webhookSecret: resolveWebhookSecret(process.env.STRIPE_WEBHOOK_SECRET, dataDir, logger),
    logger,
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'processor simulator stopping');
    await sim.close();
    await database.close();
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
