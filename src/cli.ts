import path from 'node:path';
import { parseArgs } from 'node:util';
import { adminTokenForClient } from './http/admin-token.js';

/**
 * The operator CLI: a thin client of the running server's admin API (the embedded database
 * belongs to the server process, so the CLI never opens it). Prints the response's `data`
 * as JSON; errors go to stderr with a non-zero exit.
 */
const USAGE = `Usage: npm run --silent cli -- <command>

  creators create --name NAME --email EMAIL   create a creator and its first API key
  creators login-link --email EMAIL            a one-time sign-in link to the creator's dashboard (works once, for an hour)
  api-keys create --creator CREATOR_ID         issue another key for a creator
  api-keys list --creator CREATOR_ID           list a creator's keys (no secrets)
  api-keys revoke --key KEY_ID                 revoke a key
  reconcile [--creator CREATOR_ID]             compare the mirror with the processor now and heal drift
  ledger verify --creator CREATOR_ID           check the creator's money identities at the processor (exit 3 on a mismatch)
  webhooks list [--status dead|pending|processed]   processor events in the inbox (default: dead, parked after their last attempt)
  webhooks retry [--id EVENT_ID]               put dead events (all, or one) back in the queue

Environment: TRIBES_URL (default http://127.0.0.1:3000), ADMIN_TOKEN (default: read DATA_DIR/admin-token, DATA_DIR default ./data)`;

class CliError extends Error {}

function adminToken(env: NodeJS.ProcessEnv): string {
  try {
    return adminTokenForClient(env);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

async function call(env: NodeJS.ProcessEnv, method: string, route: string, body?: unknown): Promise<unknown> {
  const base = (env.TRIBES_URL || 'http://127.0.0.1:3000').replace(/\/$/, '');
  let res: Response;
  try {
    res = await fetch(`${base}/api/v1/admin${route}`, {
      method,
      headers: { authorization: `Bearer ${adminToken(env)}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new CliError(`Cannot reach the Tribes server at ${base}; is it running (npm start)? Set TRIBES_URL otherwise.`);
  }
  const payload = (await res.json().catch(() => null)) as { success?: boolean; data?: unknown; error?: { code: string; message: string } } | null;
  if (!res.ok || !payload?.success) {
    const error = payload?.error;
    throw new CliError(error ? `${res.status} ${error.code}: ${error.message}` : `HTTP ${res.status} from ${base}`);
  }
  return payload.data;
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new CliError(`--${name} is required.\n\n${USAGE}`);
  return v;
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      creator: { type: 'string' },
      key: { type: 'string' },
      status: { type: 'string' },
      id: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const command = positionals.join(' ');
  switch (command) {
    case 'creators create':
      return call(env, 'POST', '/creators', { name: required(values, 'name'), email: required(values, 'email') });
    case 'creators login-link':
      return call(env, 'POST', '/login-links', { email: required(values, 'email') });
    case 'api-keys create':
      return call(env, 'POST', `/creators/${encodeURIComponent(required(values, 'creator'))}/api-keys`);
    case 'api-keys list':
      return call(env, 'GET', `/creators/${encodeURIComponent(required(values, 'creator'))}/api-keys`);
    case 'ledger verify':
      return call(env, 'GET', `/creators/${encodeURIComponent(required(values, 'creator'))}/ledger`);
    case 'reconcile':
      return call(env, 'POST', `/reconcile${typeof values.creator === 'string' ? `?creator_id=${encodeURIComponent(values.creator)}` : ''}`);
    case 'webhooks list':
      return call(env, 'GET', `/webhook-events?status=${encodeURIComponent(typeof values.status === 'string' ? values.status : 'dead')}&limit=100`);
    case 'webhooks retry':
      return call(env, 'POST', `/webhook-events/retry${typeof values.id === 'string' ? `?id=${encodeURIComponent(values.id)}` : ''}`);
    case 'api-keys revoke':
      return call(env, 'DELETE', `/api-keys/${encodeURIComponent(required(values, 'key'))}`);
    default:
      throw new CliError(values.help || command === '' ? USAGE : `Unknown command "${command}".\n\n${USAGE}`);
  }
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isMain) {
  runCli(process.argv.slice(2))
    .then((data) => {
      process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
      // A ledger that does not add up is a failure a script must notice.
      if (data && typeof data === 'object' && (data as { ok?: unknown }).ok === false) process.exit(3);
    })
    .catch((err: unknown) => {
      process.stderr.write(`${err instanceof CliError ? err.message : String(err)}\n`);
      process.exit(err instanceof CliError ? 2 : 1);
    });
}
