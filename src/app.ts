import crypto from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { registerFeatures, type FeatureDeps } from './features.js';
import type { Principal } from './http/auth.js';
import { registerCors } from './http/cors.js';
import { answerFrameworkError, registerErrorHandling } from './http/error-handler.js';
import { AppError } from './http/errors.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerMetrics, registerReplicaMetrics } from './http/metrics.js';
import { registerOpenApi } from './http/openapi.js';
import { registerRateLimit } from './http/rate-limit.js';
import { createPins, describeReadRouting, registerReadRouting } from './http/read-routing.js';
import { lazyRequestLogger } from './http/request-logger.js';
import { cachedSerializers } from './http/serializers.js';
import { ErrorBody, Pagination } from './http/schemas.js';
import { registerValidation } from './http/validation.js';
import { ApiKey, Creator } from './modules/admin/admin.schemas.js';
import { CreatorApiKey } from './modules/api-keys/api-keys.schemas.js';
import { DashboardSession } from './modules/dashboard-sessions/sessions.schemas.js';
import { Community } from './modules/communities/communities.schemas.js';
import { DiscoverCommunity } from './modules/discover/discover.schemas.js';
import { Member } from './modules/members/members.schemas.js';
import { ExecutedWorkout, MemberListItem, MemberRecord } from './modules/memberships/memberships.schemas.js';
import type { Standings } from './modules/challenges/standings.js';
import type { MetricsAggregates } from './modules/metrics/aggregates.js';
import type { MetricsHistory as MetricsHistoryJob } from './modules/metrics/history.js';
import { Challenge, Leaderboard, MemberChallenge, MemberLeaderboard, Ranking } from './modules/challenges/challenges.schemas.js';
import { Comment, Kudos, LockedPost, MemberComment, MemberPoll, MemberPost, Poll, Post } from './modules/posts/posts.schemas.js';
import { Cohorts, CommunityMetrics, CreatorMetrics, MetricsHistory } from './modules/metrics/metrics.schemas.js';
import { Tier } from './modules/tiers/tiers.schemas.js';
import type { TaskRunner } from './jobs/tasks.js';
import type { Reconciler } from './modules/reconcile/reconcile.service.js';
import { Balance, Payout } from './modules/payouts/payouts.schemas.js';
import { Refund, Subscription } from './modules/subscriptions/subscriptions.schemas.js';
import { Exercise } from './modules/exercises/exercises.schemas.js';
import { Program, ProgramDetail, Workout } from './modules/programs/programs.schemas.js';
import { WebhookEvent } from './modules/webhooks/webhook-events.schemas.js';
import { CreatedWorkoutLog, WorkoutLog } from './modules/workout-logs/workout-logs.schemas.js';
import { WebhookDelivery, WebhookEndpoint } from './modules/events/endpoints.schemas.js';
import { webhooksSection } from './modules/events/catalog/openapi.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Work started after a response; tests and shutdown wait on `tasks.idle()`. */
    tasks: TaskRunner;
    reconciler: Reconciler;
    /** The daily end-of-day ranks of challenges (leaderboard deltas); tests run it after moving the clock. */
    standings: Standings;
    /** The daily metrics history; tests run it after moving the clock. */
    metricsHistory: MetricsHistoryJob;
    /** The creator metrics' counters on the app's clock; tests fold activity with it and write fixtures through it. */
    metricsCounters: MetricsAggregates;
  }
}

/** What the app is built from: the features' dependencies, and how to log. */
export interface AppDeps extends FeatureDeps {
  /** An existing pino logger (the server's), or logger options; tests pass `false`. */
  logger?: FastifyBaseLogger | FastifyServerOptions['logger'];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const WORKER_PATHS = new Set(['/health', '/ready', '/metrics']);

/** Log redaction: secrets never reach a log line, whatever logs them. */
export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'headers.authorization',
  '*.password',
  '*.api_key',
  '*.token',
  'password',
  'api_key',
  'token',
];

/**
 * Request lines as Fastify writes them, but with the `link` of an onboarding page's URL
 * hidden (it opens a processor onboarding link for its creator, src/modules/account) and the
 * `token` of a dashboard sign-in link (it signs its holder in, src/modules/dashboard-sessions).
 */
export const LOG_SERIALIZERS = {
  /**
   * "request completed" lines say who acted (the audit trail): the creator and the credential
   * (an API key or a dashboard session, by id), the member, or the operator. Run only when the
   * line is written, so a quiet log level costs nothing.
   */
  res: (reply: { statusCode: number; request?: { principal?: Principal | null } }) => ({ statusCode: reply.statusCode, ...actorOf(reply.request?.principal) }),
  req: (req: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
    method: req.method,
    url: req.url.replace(/([?&](?:link|token)=)[^&]*/g, '$1[redacted]'),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }),
};

function actorOf(principal: Principal | null | undefined) {
  switch (principal?.kind) {
    case 'creator':
      return { creatorId: principal.creatorId, credential: `${principal.via}:${principal.credentialId}` };
    case 'member':
      return { memberId: principal.memberId };
    case 'admin':
      return { admin: true };
    default:
      return {};
  }
}

const isLogger = (l: AppDeps['logger']): l is FastifyBaseLogger => typeof l === 'object' && l !== null && 'child' in l;

/** Answers longer than this (UTF-16 units) are encoded to bytes once, in buildApp's onSend hook. */
const LARGE_ANSWER_CHARS = 4_096;

/** The composition root: the HTTP conventions (src/http/), then every feature (src/features.ts). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database } = deps;
  const db = database.db;
  const app = Fastify({
    ...(isLogger(deps.logger)
      ? { loggerInstance: deps.logger }
      : { logger: deps.logger ?? { level: config.logLevel, redact: LOG_REDACT, serializers: LOG_SERIALIZERS } }),
    bodyLimit: config.bodyLimitBytes,
    // Off unless TRUST_PROXY says which proxies to believe: request.ip (and so every per-address
    // rate limit) is then the client's address from X-Forwarded-For, not the load balancer's.
    trustProxy: config.trustProxy,
    // A caller's X-Request-Id is kept when well formed, so its logs and ours join up.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    },
    return503OnClosing: true,
    schemaController: { compilersFactory: { buildSerializer: cachedSerializers } },
    childLoggerFactory: lazyRequestLogger,
    // The router's own failures (a malformed escape, an over-long path segment) in our envelope.
    frameworkErrors: answerFrameworkError,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest('principal', null);
  for (const schema of [ErrorBody, Pagination, Creator, ApiKey, CreatorApiKey, DashboardSession, Community, Tier, Member, DiscoverCommunity, Subscription, Refund, Payout, Balance, Exercise, Workout, Program, ProgramDetail, WorkoutLog, CreatedWorkoutLog, WebhookEvent, MemberListItem, MemberRecord, ExecutedWorkout, Challenge, MemberChallenge, Ranking, Leaderboard, MemberLeaderboard, Poll, MemberPoll, Post, MemberPost, LockedPost, Comment, MemberComment, Kudos, CreatorMetrics, CommunityMetrics, Cohorts, MetricsHistory, WebhookEndpoint, WebhookDelivery]) app.addSchema(schema);

  // JSON only. An empty body counts as no body (clients send Content-Type on bodiless POSTs).
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    parseJson(request, text, done);
  });

  // While draining for shutdown, in-flight answers close their connection: a kept-alive
  // socket would otherwise hold the server open until its keep-alive timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
    // A long answer (a feed or member page) goes out as bytes encoded once here. As the string the
    // serializer built piece by piece, it was flattened and measured for Content-Length, then
    // encoded again by the socket's write: a feed page of 111 KB cost the server 3.0–4.0 ms as a
    // string and 2.1–2.5 as bytes (docs/benchmarks.md). GET only: a POST's answer may still be
    // stored as text by the idempotency hook after this one.
    if (typeof payload === 'string' && payload.length > LARGE_ANSWER_CHARS && request.method === 'GET') return done(null, Buffer.from(payload));
    done(null, payload);
  });

  registerErrorHandling(app);
  // A worker (`npm run worker`) runs the jobs and answers only what an orchestrator probes.
  if (config.worker) {
    app.addHook('onRequest', async (request) => {
      if (!WORKER_PATHS.has(request.url.split('?')[0]!)) throw new AppError('not_found', 'This process is a worker (npm run worker): it runs the scheduled jobs and serves no API; send requests to an API node.');
    });
  }
  registerValidation(app);
  registerMetrics(app);
  await registerOpenApi(app, { webhooks: webhooksSection() });

  // Before the rate limit: a preflight is answered by the CORS hook and never counted.
  await registerCors(app, config.cors);
  const { redis } = await registerRateLimit(app, config);

  // Before any route: the heavy reads marked `reads: 'replica'` go to a healthy replica.
  describeReadRouting(app);
  if (deps.replicas) {
    // Pins are shared through the rate limit's Redis connection (REDIS_URL), when there is one.
    registerReadRouting(app, { replicas: deps.replicas, pins: createPins({ pinMs: config.replicaMaxLagMs + 1000, ...(redis ? { redis } : {}) }) });
    registerReplicaMetrics(app, deps.replicas);
  }

  const idempotency = registerIdempotency(app, { db, ttlHours: config.idempotencyTtlHours, onBatch: app.batchSizeMetric });

  await registerFeatures(app, deps, { purgeIdempotencyKeys: idempotency.purgeExpired });
  return app;
}
