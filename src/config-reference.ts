/**
 * Every environment variable the code reads, with its default and meaning: the source of the
 * configuration table in docs/operations.md (`npm run readme:tables` writes it). test/readme-tables.test.ts
 * fails when that table differs, when code reads a variable missing here (or nothing reads
 * one listed), and when setting a variable to the default written here changes the config.
 */
export interface EnvironmentVariable {
  /** One name, or a few documented together (a host and its port). */
  names: readonly [string, ...string[]];
  /** As docs/operations.md shows it (markdown): a `literal`, or unset / generated / off. */
  default: string;
  /** One line, markdown. */
  meaning: string;
}

export const ENVIRONMENT: readonly EnvironmentVariable[] = [
  {
    names: ['HOST'],
    default: '`127.0.0.1`',
    meaning: 'listen address',
  },
  {
    names: ['PORT'],
    default: '`3000`',
    meaning: 'listen port',
  },
  {
    names: ['DATA_DIR'],
    default: '`./data`',
    meaning: 'embedded database files (`DATA_DIR/pglite`) and the generated admin token',
  },
  {
    names: ['DATABASE_URL'],
    default: 'unset',
    meaning: '`postgres://…` to use a PostgreSQL server instead of the embedded database',
  },
  {
    names: ['DATABASE_REPLICA_URL'],
    default: 'unset',
    meaning: 'read replicas of `DATABASE_URL` (streaming standbys), comma-separated: the heavy, lag-tolerant reads (member list, record and export, metrics, leaderboards, post lists; each route says so in its description) go to one that is `ok`, the primary otherwise; a creator or member who wrote reads the primary for `REPLICA_MAX_LAG_MS` + 1 s (across nodes with `REDIS_URL`)',
  },
  {
    names: ['REPLICA_MAX_LAG_MS'],
    default: '`1000`',
    meaning: 'a replica further behind than this (measured every 0.5 s against the primary\'s WAL position) is not read from until it catches up; `/ready` and `/metrics` show each replica\'s state and lag',
  },
  {
    names: ['DATABASE_POOL_MAX'],
    default: '`10`',
    meaning: 'connections per process (PostgreSQL)',
  },
  {
    names: ['DATABASE_STATEMENT_TIMEOUT_MS'],
    default: '`5000`',
    meaning: 'per-statement limit on PostgreSQL; a statement over it answers 503',
  },
  {
    names: ['ADMIN_TOKEN'],
    default: 'generated',
    meaning: 'operator token (≥ 24 chars); unset → generated into `DATA_DIR/admin-token`, mode 0600',
  },
  {
    names: ['RATE_LIMIT_MAX'],
    default: '`600`',
    meaning: 'requests per window per creator (all its keys), member (all its tokens) or operator; per client address for requests without a valid credential',
  },
  {
    names: ['RATE_LIMIT_SIGNUPS_PER_HOUR'],
    default: '`20`',
    meaning: 'member sign-ups per client address per hour',
  },
  {
    names: ['TRUST_PROXY'],
    default: 'off',
    meaning: "behind a load balancer: `true` (only if nothing else can reach the server), or a comma-separated list of the proxies' addresses/CIDR ranges (`10.0.0.0/8,fd00::/8`); the client address is then taken from `X-Forwarded-For`. A hop count is refused (Fastify 5 ignores it)",
  },
  {
    names: ['CORS_ORIGINS'],
    default: 'unset (no CORS)',
    meaning: 'origins whose web pages may call the discovery and member APIs from a browser: `*`, or a comma-separated list (`https://tribe.example,http://localhost:5173`). Credentials (cookies) are never allowed cross-origin; the operator API and the processor webhook never answer another origin',
  },
  {
    names: ['CORS_CREATOR_API'],
    default: '`false`',
    meaning: '`true` opens the creator API to `CORS_ORIGINS` too (a page holding a creator key)',
  },
  {
    names: ['RATE_LIMIT_WINDOW_MS'],
    default: '`60000`',
    meaning: 'rate-limit window',
  },
  {
    names: ['REDIS_URL'],
    default: 'unset',
    meaning: 'share rate-limit counters between API nodes (see scale-out)',
  },
  {
    names: ['IDEMPOTENCY_TTL_HOURS'],
    default: '`24`',
    meaning: 'how long an `Idempotency-Key` is remembered (then purged within `IDEMPOTENCY_PURGE_INTERVAL_MS`)',
  },
  {
    names: ['IDEMPOTENCY_PURGE_INTERVAL_MS'],
    default: '`60000`',
    meaning: "how often a node that runs jobs drops the days of expired `Idempotency-Key`s (a partition each) and makes the next day's partition; keys of a day that had none are deleted, up to 1,000,000 a run (0 = never)",
  },
  {
    names: ['WEBHOOK_MAX_ATTEMPTS'],
    default: '`20`',
    meaning: 'failed attempts after which a processor event is parked as dead (backoff 5 s doubling, at most 8 h: about 2.5 days)',
  },
  {
    names: ['WEBHOOK_CONCURRENCY'],
    default: '`4`',
    meaning: 'events a node processes at once right after acknowledging them (the rest wait for the 5 s poller)',
  },
  {
    names: ['WEBHOOK_RETENTION_DAYS'],
    default: '`30`',
    meaning: 'processed events (payloads hold personal data) are deleted after this, daily',
  },
  {
    names: ['EVENTS_POLL_MS'],
    default: '`500`',
    meaning: 'how often a node looks for due deliveries to webhook endpoints (outgoing events); `0` sends none from this node',
  },
  {
    names: ['EVENTS_CONCURRENCY'],
    default: '`64`',
    meaning: 'deliveries to webhook endpoints a node sends at once',
  },
  {
    names: ['EVENTS_BUSY_IN_FLIGHT'],
    default: '`8`',
    meaning: 'HTTP requests in flight at which a node counts as busy: its deliveries then give way to the requests (late during a burst, never lost)',
  },
  {
    names: ['EVENTS_BUSY_RATE'],
    default: '`100`',
    meaning: 'deliveries a second a busy node still sends (so none waits for the burst to end); full `EVENTS_CONCURRENCY` again once it is quiet',
  },
  {
    names: ['SHUTDOWN_TIMEOUT_MS'],
    default: '`10000`',
    meaning: 'how long SIGTERM waits for in-flight requests',
  },
  {
    names: ['LOG_LEVEL'],
    default: '`info`',
    meaning: 'pino level',
  },
  {
    names: ['LOG_FORMAT'],
    default: 'unset',
    meaning: 'the server\'s logs: `json` (one JSON object per line) or `pretty` (readable lines, formatted in the process); unset → pretty when stdout is a terminal, JSON otherwise (pipes, files, log collectors, tests). `npm run processor-sim` always logs JSON',
  },
  {
    names: ['PROCESSOR'],
    default: '`simulator`',
    meaning: '`simulator` (built-in, started in-process) or `stripe` (real Stripe; needs the two below)',
  },
  {
    names: ['STRIPE_SECRET_KEY'],
    default: '`sk_test_tribes_simulator`',
    meaning: 'processor secret key (any `sk_test_…` works with the simulator)',
  },
  {
    names: ['STRIPE_WEBHOOK_SECRET'],
    default: 'generated',
    meaning: 'webhook signing secret(s), comma-separated while rolling one; unset with the simulator → generated into `DATA_DIR/processor-webhook-secret` (0600)',
  },
  {
    names: ['PROCESSOR_SIM_HOST', 'PROCESSOR_SIM_PORT'],
    default: '`127.0.0.1` / `12111`',
    meaning: 'where the simulator listens (`0` = any free port)',
  },
  {
    names: ['PROCESSOR_SIM_IN_PROCESS'],
    default: '`true`',
    meaning: '`false`: this node starts no simulator of its own and calls the one `npm run processor-sim` runs at `PROCESSOR_SIM_HOST`:`PROCESSOR_SIM_PORT` (several nodes, or `npm run worker`, share it; its secret comes from `STRIPE_WEBHOOK_SECRET` or the same `DATA_DIR` file)',
  },
  {
    names: ['PROCESSOR_WEBHOOK_URL'],
    default: '`http://127.0.0.1:3000/api/v1/webhooks/processor`',
    meaning: '`npm run processor-sim` only: where the standalone simulator delivers events',
  },
  {
    names: ['CURRENCY'],
    default: '`brl`',
    meaning: 'ISO currency of tier prices',
  },
  {
    names: ['CHECKOUT_SUCCESS_URL', 'CHECKOUT_CANCEL_URL'],
    default: '`http://127.0.0.1:3000/checkout/success?session_id={CHECKOUT_SESSION_ID}` / `…/checkout/canceled`',
    meaning: 'where hosted checkout returns the member (point them at the member app)',
  },
  {
    names: ['BILLING_PORTAL_RETURN_URL'],
    default: '`http://127.0.0.1:3000/checkout/portal-return`',
    meaning: "where the processor's billing portal (POST /api/v1/member/billing-portal) returns the member (point it at the member app)",
  },
  {
    names: ['PUBLIC_URL'],
    default: '`http://127.0.0.1:3000` (the port follows `PORT`)',
    meaning: "this service as a creator's browser reaches it: the processor sends creators back to `PUBLIC_URL/connect/onboarding/…` from onboarding (https in production; Stripe's live mode requires it)",
  },
  {
    names: ['JOBS'],
    default: '`true`',
    meaning: 'whether this node runs the scheduled jobs (inbox retries, reconciliation, metrics, standings, outgoing events, purges); `false` on API nodes beside `npm run worker`, which runs them and serves no API (it answers `/health`, `/ready` and `/metrics` on `PORT`). Every job is safe on several nodes at once',
  },
  {
    names: ['RECONCILE_INTERVAL_MS'],
    default: '`900000`',
    meaning: 'how often the mirror is reconciled with the processor (0 = never; `cli -- reconcile` any time)',
  },
  {
    names: ['METRICS_FOLD_INTERVAL_MS'],
    default: '`60000`',
    meaning: "how often a node folds the members active since the last run into the creator metrics' day counts (one node at a time; a summary counts the members active since the last fold one by one, so a longer interval makes summaries slower, never wrong); the first run at start-up also computes the counters of any creator who has none (0 = never; tests fold by hand)",
  },
  {
    names: ['METRICS_HISTORY_INTERVAL_MS'],
    default: '`900000`',
    meaning: "how often a node fills the daily metrics history's missing days (`GET /creator-metrics/history`); each day is written once per creator and community across all nodes, and a first run backfills up to 90 days; one node at a time does the work (an advisory lock) (0 = never; tests run it by hand)",
  },
  {
    names: ['CHALLENGE_RANKING_INTERVAL_MS'],
    default: '`300000`',
    meaning: "how often a node checks that yesterday's end-of-day challenge ranks (leaderboard `delta`) are kept; the work is done once a day per challenge across all nodes (0 = never; tests run it by hand)",
  },
  {
    names: ['EXERCISE_VIDEO_BASE_URL'],
    default: '`https://videos.tribes.app/exercises`',
    meaning: "where catalog exercise videos live: `video_url` = this base + `/` + the exercise's slug; at most 1,800 characters",
  },
  {
    names: ['MANUAL_PAYOUT_MIN_CENTS'],
    default: '`100`',
    meaning: 'smallest manual payout',
  },
  {
    names: ['MEMBERS_EXACT_COUNT_LIMIT'],
    default: '`10000`',
    meaning: 'a member list with a status, join-date or search filter counts `pagination.total` exactly up to this many matches and estimates it above (`total_is_estimate: true`); a list of everyone, a community or a tier is always exact',
  },
  {
    names: ['TRIBES_URL'],
    default: '`http://127.0.0.1:3000`',
    meaning: 'CLI and `npm run demo` only: the server they talk to (the demo defaults to `PORT` on 127.0.0.1)',
  },
  {
    names: ['PROCESSOR_SIM_URL'],
    default: '`http://127.0.0.1:12111`',
    meaning: '`npm run demo` only: the processor simulator whose test helpers it drives (defaults to `PROCESSOR_SIM_HOST`:`PROCESSOR_SIM_PORT`)',
  },
  {
    names: ['TEST_DATABASE_URL'],
    default: 'unset',
    meaning: 'tests only: run the suite on this PostgreSQL (a fresh schema per run, dropped after)',
  },
  {
    names: ['TEST_REDIS_URL'],
    default: 'unset',
    meaning: 'tests only: also test rate limits shared through this Redis',
  },
];
