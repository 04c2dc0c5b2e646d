import path from 'node:path';
import { ConfigError, corsFrom, currencyFrom, flagFrom, intFrom, logFormatFrom, processorFrom, publicUrlFrom, trustProxyFrom, videoBaseFrom, type CorsConfig, type LogFormat, type ProcessorConfig } from './config-values.js';

export { ConfigError, type CorsConfig, type LogFormat, type ProcessorConfig };
/**
 * Typed configuration, read once from the environment and validated at start.
 * Every variable the code reads is listed, with its default and meaning, in
 * src/config-reference.ts (docs/operations.md's table is generated from it; a test checks both).
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
  /** How often a node deletes the Idempotency-Key answers older than the TTL; 0 turns the schedule off. */
  idempotencyPurgeIntervalMs: number;
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

export interface RateLimitConfig {
  /** Requests per window per creator, member or operator; per client address without a valid credential. */
  max: number;
  windowMs: number;
  /** Shares the counters between API nodes. */
  redisUrl: string | undefined;
  /** Sign-ups per client address per hour. */
  signupsPerHour: number;
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
    idempotencyPurgeIntervalMs: intFrom(env, 'IDEMPOTENCY_PURGE_INTERVAL_MS', 60_000, 0, 86_400_000),
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
