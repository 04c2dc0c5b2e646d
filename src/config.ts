import path from 'node:path';

/**
 * Typed configuration, read once from the environment and validated at start.
 * Every variable is listed in the README's configuration table; keep the two in step.
 */
export interface Config {
  host: string;
  port: number;
  /** Where the embedded database (and the generated admin token) live. */
  dataDir: string;
  /** PostgreSQL server URL; when unset the embedded PGlite database in `dataDir` is used. */
  databaseUrl: string | undefined;
  databasePoolMax: number;
  /** Per-statement limit on the PostgreSQL server, so one slow query cannot hold a connection. */
  statementTimeoutMs: number;
  /** Admin bearer token; generated into `dataDir/admin-token` when unset. */
  adminToken: string | undefined;
  logLevel: string;
  rateLimit: { max: number; windowMs: number; redisUrl: string | undefined };
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlHours: number;
  /** The webhook inbox: attempts before an event is parked as dead, events processed at once per node, retention of processed ones. */
  webhooks: { maxAttempts: number; concurrency: number; retentionDays: number };
  /** Grace period for in-flight requests on SIGTERM before the process gives up. */
  shutdownTimeoutMs: number;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  processor: ProcessorConfig;
  /** ISO currency of tier prices (lower case, as Stripe writes it). */
  currency: string;
  /** Where hosted checkout sends the member back (the member app's pages). */
  checkout: { successUrl: string; cancelUrl: string };
  /** How often the mirror is reconciled with the processor; 0 turns the schedule off. */
  reconcileIntervalMs: number;
  /** Smallest manual payout, in cents. */
  manualPayoutMinCents: number;
  /** Where catalog exercise videos live: an exercise's `video_url` is this base + `/` + its slug. */
  exerciseVideoBaseUrl: string;
}

export interface ProcessorConfig {
  /** `simulator`: the built-in Stripe-compatible server, started in-process. `stripe`: real Stripe. */
  kind: 'simulator' | 'stripe';
  secretKey: string;
  /** Webhook signing secret; generated into DATA_DIR when unset and running the simulator. */
  webhookSecret: string | undefined;
  simHost: string;
  simPort: number;
}

export class ConfigError extends Error {}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function processorFrom(env: NodeJS.ProcessEnv): ProcessorConfig {
  const kind = env.PROCESSOR || 'simulator';
  if (kind !== 'simulator' && kind !== 'stripe') throw new ConfigError(`PROCESSOR must be "simulator" or "stripe", got "${kind}"`);
  const secretKey = env.STRIPE_SECRET_KEY || (kind === 'simulator' ? 'sk_test_tribes_simulator' : '');
  if (kind === 'stripe' && !/^(sk|rk)_(test|live)_/.test(secretKey)) {
    throw new ConfigError('PROCESSOR=stripe needs STRIPE_SECRET_KEY (sk_live_… or sk_test_…)');
  }
  if (kind === 'stripe' && !env.STRIPE_WEBHOOK_SECRET) throw new ConfigError('PROCESSOR=stripe needs STRIPE_WEBHOOK_SECRET (whsec_…)');
  return {
    kind,
    secretKey,
    webhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
    simHost: env.PROCESSOR_SIM_HOST || '127.0.0.1',
    simPort: intFrom(env, 'PROCESSOR_SIM_PORT', 12111, 0, 65535),
  };
}

function currencyFrom(env: NodeJS.ProcessEnv): string {
  const currency = (env.CURRENCY || 'brl').toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw new ConfigError(`CURRENCY must be a three-letter ISO code, got "${env.CURRENCY}"`);
  return currency;
}

function videoBaseFrom(env: NodeJS.ProcessEnv): string {
  const base = env.EXERCISE_VIDEO_BASE_URL || 'https://videos.tribes.app/exercises';
  if (!/^https?:\/\/[^\s]+$/.test(base)) throw new ConfigError(`EXERCISE_VIDEO_BASE_URL must be an http(s) URL, got "${base}"`);
  return base.replace(/\/+$/, '');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 24) {
    throw new ConfigError('ADMIN_TOKEN must be at least 24 characters long');
  }
  return {
    host: env.HOST || '127.0.0.1',
    port: intFrom(env, 'PORT', 3000, 0, 65535),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl,
    databasePoolMax: intFrom(env, 'DATABASE_POOL_MAX', 10, 1, 500),
    statementTimeoutMs: intFrom(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 100, 600_000),
    adminToken,
    logLevel: env.LOG_LEVEL || 'info',
    rateLimit: {
      max: intFrom(env, 'RATE_LIMIT_MAX', 600, 1, 10_000_000),
      windowMs: intFrom(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
      redisUrl: env.REDIS_URL || undefined,
    },
    idempotencyTtlHours: intFrom(env, 'IDEMPOTENCY_TTL_HOURS', 24, 1, 24 * 30),
    webhooks: {
      maxAttempts: intFrom(env, 'WEBHOOK_MAX_ATTEMPTS', 20, 1, 1000),
      concurrency: intFrom(env, 'WEBHOOK_CONCURRENCY', 4, 1, 256),
      retentionDays: intFrom(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
    },
    shutdownTimeoutMs: intFrom(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    bodyLimitBytes: 1024 * 1024,
    processor: processorFrom(env),
    currency: currencyFrom(env),
    checkout: {
      successUrl: env.CHECKOUT_SUCCESS_URL || 'http://127.0.0.1:3000/checkout/success?session_id={CHECKOUT_SESSION_ID}',
      cancelUrl: env.CHECKOUT_CANCEL_URL || 'http://127.0.0.1:3000/checkout/canceled',
    },
    reconcileIntervalMs: intFrom(env, 'RECONCILE_INTERVAL_MS', 15 * 60_000, 0, 7 * 86_400_000),
    manualPayoutMinCents: intFrom(env, 'MANUAL_PAYOUT_MIN_CENTS', 100, 1, 100_000_000),
    exerciseVideoBaseUrl: videoBaseFrom(env),
  };
}
