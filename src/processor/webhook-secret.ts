import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * STRIPE_WEBHOOK_SECRET when set; otherwise a `whsec_` secret kept in
 * DATA_DIR/processor-webhook-secret (mode 0600), generated on first start, so the simulator
 * and the service sign and verify with the same value across restarts. Never logged.
 */
export function resolveWebhookSecret(fromEnv: string | undefined, dataDir: string, logger: Logger): string {
  if (fromEnv) return fromEnv;
  const file = path.join(dataDir, 'processor-webhook-secret');
  if (fs.existsSync(file)) {
    const stored = fs.readFileSync(file, 'utf8').trim();
    if (stored.startsWith('whsec_')) return stored;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = `whsec_${crypto.randomBytes(24).toString('base64url')}`;
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  logger.info({ file }, 'STRIPE_WEBHOOK_SECRET unset; generated one into this file (mode 0600)');
  return secret;
}
