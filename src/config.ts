import net from 'node:net';
import path from 'node:path';

/**
 * Typed configuration, read once from the environment and validated at start.
 * Every variable the code reads is listed, with its default and meaning, in
 * src/config-reference.ts (the README's table is generated from it; a test checks both).
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
  /** `json` or `pretty` forces the log format; undefined picks pretty on a terminal, JSON otherwise (src/logging.ts). */
  logFormat: LogFormat | undefined;
  rateLimit: RateLimitConfig;
  /**
   * Which proxies in front of the server to believe about the client's address
   * (`X-Forwarded-For`), as Fastify's `trustProxy` takes it: none, all, or a list of proxy
   * addresses and CIDR ranges. Per-address rate limits count `request.ip`.
   */
  trustProxy: boolean | string[];
  /** Which other origins' pages may call the API from a browser (src/http/cors.ts); none by default. */
  cors: CorsConfig;
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlHours: number;
  /** The webhook inbox: attempts before an event is parked as dead, events processed at once per node, retention of processed ones. */
  webhooks: { maxAttempts: number; concurrency: number; retentionDays: number };
  /**
   * Outgoing events (src/modules/events): how often a node looks for due deliveries (0: never),
   * requests it sends at once, and, while it serves `busyInFlight` requests or more, the
   * deliveries a second it still sends.
   */
  events: { pollMs: number; concurrency: number; busyInFlight: number; busyRate: number };
  /** Grace period for in-flight requests on SIGTERM before the process gives up. */
  shutdownTimeoutMs: number;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  processor: ProcessorConfig;
  /** ISO currency of tier prices (lower case, as Stripe writes it). */
  currency: string;
  /** Where hosted checkout and the processor's billing portal send the member back (the member app's pages). */
  checkout: { successUrl: string; cancelUrl: string; portalReturnUrl: string };
  /** This service as browsers reach it (the processor sends creators back here from onboarding). */
  publicUrl: string;
  /**
   * Whether this node runs the scheduled jobs (jobs/schedule.ts): JOBS, default true. API
   * nodes beside a worker (`npm run worker`) run with JOBS=false and only serve requests.
   */
  jobs: boolean;
  /** Read replicas (DATABASE_REPLICA_URL, comma-separated) for the heavy, lag-tolerant reads; empty: none. */
  replicaUrls: string[];
  /** A replica further behind the primary than this is not read from (REPLICA_MAX_LAG_MS). */
  replicaMaxLagMs: number;
  /** `npm run worker` (server.ts --worker): jobs only; HTTP answers /health, /ready and /metrics, nothing else. */
  worker: boolean;
  /** How often the mirror is reconciled with the processor; 0 turns the schedule off. */
  reconcileIntervalMs: number;
  /** How often a node checks that yesterday's challenge ranks are kept (done once a day); 0 turns the schedule off. */
  challengeRankingIntervalMs: number;
  /** How often a node fills the daily metrics history's missing days (done once a day per scope); 0 turns the schedule off. */
  metricsHistoryIntervalMs: number;
  /** How often a node folds recent member activity into the creator metrics' day counts; 0 turns the schedule off. */
  metricsFoldIntervalMs: number;
  /** Smallest manual payout, in cents. */
  manualPayoutMinCents: number;
  /** Where catalog exercise videos live: an exercise's `video_url` is this base + `/` + its slug. */
  exerciseVideoBaseUrl: string;
  /** The member list counts its total exactly up to this many matches, and estimates it above (a count per request must stay cheap). */
  membersExactCountLimit: number;
  /**
   * Member CSV exports: at most `perNode` at once on a server and `perCreator` of one creator;
   * a client that takes nothing for `idleTimeoutMs` is cut off; `batchSize` members per read.
   */
  membersExport: { perNode: number; perCreator: number; idleTimeoutMs: number; batchSize: number };
}

/** Cross-origin browsers (src/http/cors.ts). */
export interface CorsConfig {
  /** `['*']` for any origin, or exact origins (`https://tribe.example`); empty turns CORS off. */
  origins: string[];
  /** Whether the creator API (`/api/v1/…` but discovery, member, admin and webhooks) is open too. */
  creatorApi: boolean;
}

export interface RateLimitConfig {
  /** Requests per window per creator, member or operator; per client address without a valid credential. */
  max: number;
  windowMs: number;
  /** Shares the counters between API nodes. */
  redisUrl: string | undefined;
  /** Sign-ups per client address per hour. */
  signupsPerHour: number;
}

export interface ProcessorConfig {
  /** `simulator`: the built-in Stripe-compatible server, started in-process. `stripe`: real Stripe. */
  kind: 'simulator' | 'stripe';
  secretKey: string;
  /** Webhook signing secret; generated into DATA_DIR when unset and running the simulator. */
  webhookSecret: string | undefined;
  simHost: string;
  simPort: number;
  /** The simulator in this process (default), or false: the one `npm run processor-sim` runs at simHost:simPort, shared by several nodes. */
  simInProcess: boolean;
}

export class ConfigError extends Error {}

export type LogFormat = 'json' | 'pretty';

function logFormatFrom(env: NodeJS.ProcessEnv): LogFormat | undefined {
  const raw = (env.LOG_FORMAT ?? '').trim().toLowerCase();
  if (raw === '') return undefined;
  if (raw === 'json' || raw === 'pretty') return raw;
  throw new ConfigError(
    `LOG_FORMAT must be "json" (one JSON object per line, for log collectors) or "pretty" (human-readable), got "${env.LOG_FORMAT}". ` +
      'Leave it unset to get pretty logs on a terminal and JSON otherwise.',
  );
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** `true` or `false` (any case); unset or empty → `fallback`. */
function flagFrom(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
  return raw === 'true';
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
    simInProcess: flagFrom(env, 'PROCESSOR_SIM_IN_PROCESS', true),
  };
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, a CIDR range (`10.0.0.0/8`, `fd00::/8`) or one of proxy-addr's names for address ranges. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = net.isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY: unset or `false` (clients connect directly), `true` (believe every proxy: only
 * when nothing but the proxy can reach the server), or a comma-separated list of the proxies'
 * addresses/CIDR ranges (the safe choice: a client cannot pose as one).
 */
function trustProxyFrom(env: NodeJS.ProcessEnv): Config['trustProxy'] {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(raw)) {
    // Fastify 5 ignores a hop count (it trusts nothing then): a count cannot tell the load
    // balancer from a client that connects directly and writes its own X-Forwarded-For.
    throw new ConfigError(
      `TRUST_PROXY does not take a number of hops ("${raw}"): Fastify ignores it, as a hop count cannot tell the load balancer from a client. ` +
        'List the load balancer addresses or CIDR ranges instead (e.g. 10.0.0.0/8), or true if nothing but the load balancer can reach the server.',
    );
  }
  const entries = raw.split(',').map((e) => e.trim());
  const wrong = entries.find((e) => !isProxyAddress(e));
  if (wrong !== undefined) {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, or a comma-separated list of the proxies' IP addresses or CIDR ranges ` +
        `(e.g. 10.0.0.0/8,fd00::/8); "${wrong}" in "${raw}" is none of these. Leave it unset when clients connect to the server directly.`,
    );
  }
  return entries;
}

/**
 * CORS_ORIGINS: `*`, or a comma-separated list of exact origins (scheme, host and port as a
 * browser sends them in `Origin`: no path, no trailing slash). CORS_CREATOR_API: `true` opens
 * the creator API to those origins as well as discovery and the member API.
 */
function corsFrom(env: NodeJS.ProcessEnv): CorsConfig {
  const raw = (env.CORS_ORIGINS ?? '').trim();
  const origins = raw === '' ? [] : raw.split(',').map((o) => o.trim());
  for (const origin of origins) {
    if (origin === '*') continue;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(
        `CORS_ORIGINS must be * or a comma-separated list of origins as browsers send them (https://tribe.example, http://localhost:5173: scheme, host, optional port, no path or trailing slash); "${origin}" is not one.`,
      );
    }
  }
  if (origins.includes('*') && origins.length > 1) throw new ConfigError('CORS_ORIGINS is either * (any origin) or a list of origins, not both.');
  const creatorApi = (env.CORS_CREATOR_API ?? '').trim().toLowerCase();
  if (!['', 'true', 'false'].includes(creatorApi)) throw new ConfigError(`CORS_CREATOR_API must be true or false, got "${env.CORS_CREATOR_API}"`);
  return { origins, creatorApi: creatorApi === 'true' };
}

function publicUrlFrom(env: NodeJS.ProcessEnv, port: number): string {
  const url = env.PUBLIC_URL || `http://127.0.0.1:${port}`;
  if (!/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(url)) throw new ConfigError(`PUBLIC_URL must be an http(s) URL without a query, got "${url}"`);
  return url.replace(/\/+$/, '');
}

function currencyFrom(env: NodeJS.ProcessEnv): string {
  const currency = (env.CURRENCY || 'brl').toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw new ConfigError(`CURRENCY must be a three-letter ISO code, got "${env.CURRENCY}"`);
  return currency;
}

const VIDEO_BASE_MAX = 1800;

function videoBaseFrom(env: NodeJS.ProcessEnv): string {
  const base = env.EXERCISE_VIDEO_BASE_URL || 'https://videos.tribes.app/exercises';
  if (!/^https?:\/\/[^\s]+$/.test(base)) throw new ConfigError(`EXERCISE_VIDEO_BASE_URL must be an http(s) URL, got "${base}"`);
  // A catalog video_url is this + '/' + a slug (at most 120), within the 2,000 the API documents.
  if (base.length > VIDEO_BASE_MAX) throw new ConfigError(`EXERCISE_VIDEO_BASE_URL must be at most ${VIDEO_BASE_MAX} characters, got ${base.length}`);
  return base.replace(/\/+$/, '');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, { worker = false }: { worker?: boolean } = {}): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const jobs = flagFrom(env, 'JOBS', true);
  if (worker && !jobs) throw new ConfigError('npm run worker runs the jobs: unset JOBS (JOBS=false is for API nodes beside a worker)');
  // The embedded database belongs to one process: a worker needs a PostgreSQL server it shares with the API nodes.
  if (worker && !databaseUrl) throw new ConfigError('npm run worker needs DATABASE_URL: it shares a PostgreSQL server with the API nodes (the embedded database belongs to one process)');
  const processor = processorFrom(env);
  const replicaUrls = (env.DATABASE_REPLICA_URL ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  for (const url of replicaUrls) if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError('DATABASE_REPLICA_URL must be postgres:// URLs, comma-separated');
  if (replicaUrls.length > 0 && !databaseUrl) throw new ConfigError('DATABASE_REPLICA_URL needs DATABASE_URL: replicas follow a PostgreSQL primary, not the embedded database');
  if (worker && processor.kind === 'simulator' && processor.simInProcess) {
    throw new ConfigError('npm run worker calls the simulator the API nodes use: run `npm run processor-sim` and set PROCESSOR_SIM_IN_PROCESS=false (and PROCESSOR_SIM_HOST/PORT)');
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
    logFormat: logFormatFrom(env),
    rateLimit: {
      max: intFrom(env, 'RATE_LIMIT_MAX', 600, 1, 10_000_000),
      windowMs: intFrom(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
      redisUrl: env.REDIS_URL || undefined,
      signupsPerHour: intFrom(env, 'RATE_LIMIT_SIGNUPS_PER_HOUR', 20, 1, 1_000_000),
    },
    trustProxy: trustProxyFrom(env),
    cors: corsFrom(env),
    idempotencyTtlHours: intFrom(env, 'IDEMPOTENCY_TTL_HOURS', 24, 1, 24 * 30),
    webhooks: {
      maxAttempts: intFrom(env, 'WEBHOOK_MAX_ATTEMPTS', 20, 1, 1000),
      concurrency: intFrom(env, 'WEBHOOK_CONCURRENCY', 4, 1, 256),
      retentionDays: intFrom(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
    },
    events: {
      pollMs: intFrom(env, 'EVENTS_POLL_MS', 500, 0, 60_000),
      concurrency: intFrom(env, 'EVENTS_CONCURRENCY', 64, 1, 1024),
      busyInFlight: intFrom(env, 'EVENTS_BUSY_IN_FLIGHT', 8, 1, 100_000),
      busyRate: intFrom(env, 'EVENTS_BUSY_RATE', 100, 1, 100_000),
    },
    shutdownTimeoutMs: intFrom(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    bodyLimitBytes: 1024 * 1024,
    processor,
    currency: currencyFrom(env),
    publicUrl: publicUrlFrom(env, intFrom(env, 'PORT', 3000, 0, 65535)),
    checkout: {
      successUrl: env.CHECKOUT_SUCCESS_URL || 'http://127.0.0.1:3000/checkout/success?session_id={CHECKOUT_SESSION_ID}',
      cancelUrl: env.CHECKOUT_CANCEL_URL || 'http://127.0.0.1:3000/checkout/canceled',
      portalReturnUrl: env.BILLING_PORTAL_RETURN_URL || 'http://127.0.0.1:3000/checkout/portal-return',
    },
    jobs,
    worker,
    replicaUrls,
    replicaMaxLagMs: intFrom(env, 'REPLICA_MAX_LAG_MS', 1000, 0, 3_600_000),
    reconcileIntervalMs: intFrom(env, 'RECONCILE_INTERVAL_MS', 15 * 60_000, 0, 7 * 86_400_000),
    challengeRankingIntervalMs: intFrom(env, 'CHALLENGE_RANKING_INTERVAL_MS', 5 * 60_000, 0, 86_400_000),
    metricsHistoryIntervalMs: intFrom(env, 'METRICS_HISTORY_INTERVAL_MS', 15 * 60_000, 0, 86_400_000),
    metricsFoldIntervalMs: intFrom(env, 'METRICS_FOLD_INTERVAL_MS', 60_000, 0, 86_400_000),
    manualPayoutMinCents: intFrom(env, 'MANUAL_PAYOUT_MIN_CENTS', 100, 1, 100_000_000),
    exerciseVideoBaseUrl: videoBaseFrom(env),
    membersExactCountLimit: intFrom(env, 'MEMBERS_EXACT_COUNT_LIMIT', 10_000, 1, 10_000_000),
    membersExport: { perNode: 2, perCreator: 1, idleTimeoutMs: 60_000, batchSize: 1000 },
  };
}
