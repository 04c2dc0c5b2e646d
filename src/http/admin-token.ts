import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { randomBase62 } from './auth.js';

/** Where a generated admin token is kept (the CLI looks there too). */
export const adminTokenFile = (dataDir: string): string => path.join(dataDir, 'admin-token');

/**
 * The token a client of the running server (the CLI, the demo) sends: ADMIN_TOKEN when set,
 * else the one the server generated into DATA_DIR (default ./data).
 */
export function adminTokenForClient(env: NodeJS.ProcessEnv): string {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  const file = adminTokenFile(path.resolve(env.DATA_DIR || './data'));
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(`No ADMIN_TOKEN set and ${file} is not readable; start the server once or set ADMIN_TOKEN (or DATA_DIR, as the server has it).`);
  }
}

/**
 * ADMIN_TOKEN when set; otherwise the token in DATA_DIR/admin-token, generated (mode 0600)
 * on first start. The log says where it is, never what it is.
 */
export function resolveAdminToken(adminToken: string | undefined, dataDir: string, logger: Logger): string {
  if (adminToken) return adminToken;
  const file = adminTokenFile(dataDir);
  if (fs.existsSync(file)) {
    const stored = fs.readFileSync(file, 'utf8').trim();
    if (stored.length >= 24) {
      logger.info({ file }, 'admin token read from file');
      return stored;
    }
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const token = `tribes_admin_${randomBase62(40)}`;
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  logger.info({ file }, 'admin token generated; read it from this file (mode 0600)');
  return token;
}
