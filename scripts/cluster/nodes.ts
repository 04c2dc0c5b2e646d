import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ServerProcess } from '../../test/crash/server.js';
import { cleanups } from './infra.js';

/**
 * The Tribes processes of the cluster: one shared processor simulator, API nodes (JOBS=false)
 * and workers (`dist/server.mjs --worker`), each a ServerProcess of the crash suite so the proof
 * can SIGKILL and restart any of them on the same port and environment. Nodes run the bundle
 * (as in production, docs/operations.md "Running in production"), the simulator through tsx.
 */

export interface ClusterEnv {
  root: string;
  repoRoot: string;
  primaryUrl: string;
  replicaUrl: string;
  redisUrl: string;
  simPort: number;
  lbPort: number;
  adminToken: string;
  webhookSecret: string;
  /** Each caller's budget per window (docs/api.md, Rate limits), shared through Redis. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** The workers' job intervals (`RECONCILE_INTERVAL_MS`…): seconds for the proof, the defaults otherwise. */
  jobIntervals?: Record<string, string>;
}

export const SECRET_KEY = 'sk_test_tribes_cluster';

export function newClusterSecrets() {
  return {
    adminToken: `cluster_admin_${crypto.randomBytes(18).toString('hex')}`,
    webhookSecret: `whsec_${crypto.randomBytes(24).toString('base64')}`,
  };
}

/** These variables of this process, as they are (named by a list: the configuration table in docs/operations.md is for Tribes' own). */
const inherited = (names: string[]): Record<string, string> =>
  Object.fromEntries(names.flatMap((n) => (process.env[n] === undefined ? [] : [[n, process.env[n]!]])));

function baseEnv(c: ClusterEnv, name: string): Record<string, string> {
  const dataDir = path.join(c.root, 'data', name);
  fs.mkdirSync(dataDir, { recursive: true });
  return {
    // Only what a process needs from ours (where its binaries are, a home): the rest is set here.
    ...inherited(['PATH', 'HOME']),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: c.webhookSecret,
    PROCESSOR_SIM_HOST: '127.0.0.1',
    PROCESSOR_SIM_PORT: String(c.simPort),
  };
}

/** Everything a node knows: the primary, the replica (ignored until replica routing lands), Redis, the simulator. */
function nodeEnv(c: ClusterEnv, name: string, port: number, jobs: boolean): Record<string, string> {
  return {
    ...baseEnv(c, name),
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: c.primaryUrl,
    DATABASE_REPLICA_URL: c.replicaUrl,
    REDIS_URL: c.redisUrl,
    TRUST_PROXY: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${c.lbPort}`,
    PROCESSOR: 'simulator',
    PROCESSOR_SIM_IN_PROCESS: 'false',
    ADMIN_TOKEN: c.adminToken,
    RATE_LIMIT_MAX: String(c.rateLimitMax),
    RATE_LIMIT_WINDOW_MS: String(c.rateLimitWindowMs),
    // Every member of the tour signs up from 127.0.0.1 (behind HAProxy): one address.
    RATE_LIMIT_SIGNUPS_PER_HOUR: '100000',
    SHUTDOWN_TIMEOUT_MS: '2000',
    ...(jobs ? (c.jobIntervals ?? {}) : { JOBS: 'false' }),
  };
}

function logFile(c: ClusterEnv, name: string): string {
  return path.join(c.root, `${name}.log`);
}

function owned(p: ServerProcess): ServerProcess {
  cleanups.push(() => p.killSync());
  return p;
}

export function simulatorProcess(c: ClusterEnv): ServerProcess {
  const env = {
    ...baseEnv(c, 'processor-sim'),
    DATABASE_URL: c.primaryUrl,
    PROCESSOR_WEBHOOK_URL: `http://127.0.0.1:${c.lbPort}/api/v1/webhooks/processor`,
  };
  return owned(
    new ServerProcess({ cwd: c.repoRoot, env, port: c.simPort, logFile: logFile(c, 'processor-sim'), args: ['--import', 'tsx', 'src/processor/simulator-main.ts'], readyPath: '/' }),
  );
}

export function apiNode(c: ClusterEnv, name: string, port: number): ServerProcess {
  return owned(new ServerProcess({ cwd: c.repoRoot, env: nodeEnv(c, name, port, false), port, logFile: logFile(c, name), args: ['dist/server.mjs'] }));
}

export function workerNode(c: ClusterEnv, name: string, port: number): ServerProcess {
  return owned(new ServerProcess({ cwd: c.repoRoot, env: nodeEnv(c, name, port, true), port, logFile: logFile(c, name), args: ['dist/server.mjs', '--worker'] }));
}
