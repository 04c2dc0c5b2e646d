import crypto from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { runExclusive } from './db/locks.js';
import { bearerToken, creatorAuth, sha256 } from './http/auth.js';
import { registerErrorHandling } from './http/error-handler.js';
import { AppError } from './http/errors.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerMetrics } from './http/metrics.js';
import { registerOpenApi } from './http/openapi.js';
import { ErrorBody, Pagination } from './http/schemas.js';
import { registerValidation } from './http/validation.js';
import { adminRoutes } from './modules/admin/admin.routes.js';
import { ApiKey, Creator } from './modules/admin/admin.schemas.js';
import { createAdminService } from './modules/admin/admin.service.js';
import { communitiesRoutes } from './modules/communities/communities.routes.js';
import { createCommunitiesRepo } from './modules/communities/communities.repo.js';
import { Community } from './modules/communities/communities.schemas.js';
import { createCommunitiesService } from './modules/communities/communities.service.js';
import { createCreatorsRepo } from './modules/creators/creators.repo.js';
import { createDiscoverRepo } from './modules/discover/discover.repo.js';
import { discoverRoutes } from './modules/discover/discover.routes.js';
import { DiscoverCommunity } from './modules/discover/discover.schemas.js';
import { createDiscoverService } from './modules/discover/discover.service.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { memberAuth } from './modules/members/member-auth.js';
import { createMembersRepo } from './modules/members/members.repo.js';
import { memberPublicRoutes, memberRoutes } from './modules/members/members.routes.js';
import { Member } from './modules/members/members.schemas.js';
import { createMembersService } from './modules/members/members.service.js';
import { createTiersRepo } from './modules/tiers/tiers.repo.js';
import { tiersRoutes } from './modules/tiers/tiers.routes.js';
import { Tier } from './modules/tiers/tiers.schemas.js';
import { createTiersService } from './modules/tiers/tiers.service.js';
import type { Processor } from './processor/processor.js';
import { every, TaskRunner } from './jobs/tasks.js';
import { checkoutPages } from './modules/checkout/checkout.pages.js';
import { memberBillingRoutes } from './modules/checkout/checkout.routes.js';
import { createCheckoutService } from './modules/checkout/checkout.service.js';
import { reconcileRoutes } from './modules/reconcile/reconcile.routes.js';
import { createReconciler, type Reconciler } from './modules/reconcile/reconcile.service.js';
import { ledgerRoutes } from './modules/payouts/ledger.routes.js';
import { createBalanceCopy } from './modules/payouts/balance-copy.js';
import { createPayoutSync } from './modules/payouts/payout-sync.js';
import { payoutsRoutes } from './modules/payouts/payouts.routes.js';
import { Balance, Payout } from './modules/payouts/payouts.schemas.js';
import { createPayoutsService } from './modules/payouts/payouts.service.js';
import { createSubscriptionsRepo } from './modules/subscriptions/subscriptions.repo.js';
import { subscriptionsRoutes } from './modules/subscriptions/subscriptions.routes.js';
import { Refund, Subscription } from './modules/subscriptions/subscriptions.schemas.js';
import { createSubscriptionsService } from './modules/subscriptions/subscriptions.service.js';
import { createSubscriptionSync } from './modules/subscriptions/sync.js';
import { createPaymentsSync } from './modules/subscriptions/payments-sync.js';
import { createEventHandlers } from './modules/webhooks/handlers.js';
import { createExercisesRepo } from './modules/exercises/exercises.repo.js';
import { exercisesRoutes, memberExercisesRoutes } from './modules/exercises/exercises.routes.js';
import { Exercise } from './modules/exercises/exercises.schemas.js';
import { createExercisesService } from './modules/exercises/exercises.service.js';
import { memberProgramsRoutes } from './modules/programs/programs.member-routes.js';
import { createProgramsRepo } from './modules/programs/programs.repo.js';
import { programsRoutes } from './modules/programs/programs.routes.js';
import { Program, ProgramDetail, Workout } from './modules/programs/programs.schemas.js';
import { createProgramsService } from './modules/programs/programs.service.js';
import { createWorkoutLogsRepo } from './modules/workout-logs/workout-logs.repo.js';
import { workoutLogsRoutes } from './modules/workout-logs/workout-logs.routes.js';
import { CreatedWorkoutLog, WorkoutLog } from './modules/workout-logs/workout-logs.schemas.js';
import { createLoggingRepo } from './modules/workout-logs/logging.repo.js';
import { createWorkoutLogsService } from './modules/workout-logs/workout-logs.service.js';
import { createInbox } from './modules/webhooks/inbox.js';
import { webhookRoutes } from './modules/webhooks/webhooks.routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Work started after a response; tests and shutdown wait on `tasks.idle()`. */
    tasks: TaskRunner;
    reconciler: Reconciler;
  }
}

export interface AppDeps {
  config: Config;
  database: DatabaseHandle;
  adminToken: string;
  /** The payment processor (real Stripe or the simulator), through the stripe SDK. */
  processor: Processor;
  /** Webhook signing secrets; several while one is being rolled. */
  webhookSecrets: string[];
  /** An existing pino logger (the server's), or logger options; tests pass `false`. */
  logger?: FastifyBaseLogger | FastifyServerOptions['logger'];
}

const RECONCILE_LOCK_ID = 7_321_004_118;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const UNLIMITED_PATHS = new Set(['/health', '/ready', '/metrics', '/openapi.json', '/api/v1/webhooks/processor']);

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

const isLogger = (l: AppDeps['logger']): l is FastifyBaseLogger => typeof l === 'object' && l !== null && 'child' in l;

/** The composition root: plugins, conventions, then every feature module with its dependencies. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database } = deps;
  const db = database.db;
  const app = Fastify({
    ...(isLogger(deps.logger)
      ? { loggerInstance: deps.logger }
      : { logger: deps.logger ?? { level: config.logLevel, redact: LOG_REDACT } }),
    bodyLimit: config.bodyLimitBytes,
    // A caller's X-Request-Id is kept when well formed, so its logs and ours join up.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    },
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest('principal', null);
  for (const schema of [ErrorBody, Pagination, Creator, ApiKey, Community, Tier, Member, DiscoverCommunity, Subscription, Refund, Payout, Balance, Exercise, Workout, Program, ProgramDetail, WorkoutLog, CreatedWorkoutLog]) app.addSchema(schema);

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
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
    return payload;
  });

  registerErrorHandling(app);
  registerValidation(app);
  registerMetrics(app);
  await registerOpenApi(app);

  const redis = config.rateLimit.redisUrl
    ? new Redis(config.rateLimit.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
    : undefined;
  if (redis) {
    app.addHook('onClose', async () => void redis.disconnect());
    // Counting fails open while Redis is unreachable (skipOnError); waiting briefly here
    // means a healthy Redis counts from the first request.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (redis.status !== 'ready') app.log.warn('Redis for rate limiting is not reachable yet; limits are not enforced until it is');
  }
  await app.register(rateLimit, {
    // Not per route: a route-level hook would run after the creator-auth hook, so requests
    // with unknown keys (brute force) would never be counted. One root hook runs first.
    global: false,
    max: config.rateLimit.max,
    timeWindow: config.rateLimit.windowMs,
    ...(redis ? { redis, skipOnError: true } : {}),
    // Per API key (a digest of it, never the key itself); unauthenticated callers per address.
    keyGenerator: (request) => {
      const token = bearerToken(request);
      return token ? `key:${sha256(token).toString('base64url')}` : `ip:${request.ip}`;
    },
    allowList: (request) => UNLIMITED_PATHS.has(request.url.split('?')[0] ?? '') || request.url.startsWith('/docs'),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Too many requests: at most ${context.max} per ${context.after}. Retry after the Retry-After seconds.`, undefined, {
        'Retry-After': String(Math.max(1, Math.ceil(context.ttl / 1000))),
      }),
  });

  app.addHook('onRequest', app.rateLimit());

  registerIdempotency(app, { db, ttlHours: config.idempotencyTtlHours });

  const { processor } = deps;
  const logger = app.log as unknown as Logger;
  const tasks = new TaskRunner(logger);
  app.decorate('tasks', tasks);
  const creators = createCreatorsRepo(db);
  const communitiesRepo = createCommunitiesRepo(db);
  const sync = createSubscriptionSync({ db, processor, logger });
  const subscriptions = createSubscriptionsService({ db, subscriptions: createSubscriptionsRepo(db), creators, processor, sync, logger });
  const communities = createCommunitiesService({
    db,
    communities: communitiesRepo,
    onPauseChanged: (creatorId, communityId, paused) =>
      tasks.run(`community ${communityId} ${paused ? 'pause' : 'resume'}`, () => subscriptions.propagatePause(creatorId, communityId, paused)),
  });
  const payoutSync = createPayoutSync({ db, processor, sync });
  const balanceCopy = createBalanceCopy({ db, processor });
  const payouts = createPayoutsService({ db, processor, payoutSync, balanceCopy, currency: config.currency, minimumCents: config.manualPayoutMinCents });
  const payments = createPaymentsSync({ db, processor });
  const inbox = createInbox({ db, handlers: createEventHandlers({ processor, sync, payoutSync, payments }), logger });
  const reconciler = createReconciler({ db, processor, sync, payoutSync, balanceCopy, payments, subscriptions, inbox, logger });
  app.decorate('reconciler', reconciler);
  const checkout = createCheckoutService({ db, processor, successUrl: config.checkout.successUrl, cancelUrl: config.checkout.cancelUrl });
  const tiers = createTiersService({
    db,
    tiers: createTiersRepo(db),
    communities: communitiesRepo,
    creators,
    processor,
    currency: config.currency,
    logger,
  });
  const exercisesRepo = createExercisesRepo(db);
  const exercises = createExercisesService({ db, exercises: exercisesRepo, videoBaseUrl: config.exerciseVideoBaseUrl });
  const programs = createProgramsService({ db, programs: createProgramsRepo(db), communities: communitiesRepo, exercises: exercisesRepo });
  const workoutLogs = createWorkoutLogsService({ db, logs: createWorkoutLogsRepo(db), logging: createLoggingRepo(db) });

  await app.register(healthRoutes(database.ping));
  await app.register(adminRoutes(createAdminService({ db, creators, processor }), deps.adminToken), { prefix: '/api/v1/admin' });
  await app.register(
    async (api) => {
      api.addHook('onRequest', creatorAuth(creators));
      await api.register(communitiesRoutes(communities));
      await api.register(tiersRoutes(tiers));
      await api.register(subscriptionsRoutes(subscriptions));
      await api.register(payoutsRoutes(payouts));
      await api.register(exercisesRoutes(exercises));
      await api.register(programsRoutes(programs));
    },
    { prefix: '/api/v1' },
  );
  await app.register(discoverRoutes(createDiscoverService({ discover: createDiscoverRepo(db) })), { prefix: '/api/v1/discover' });
  const membersRepo = createMembersRepo(db);
  const members = createMembersService({ db, members: membersRepo });
  await app.register(memberPublicRoutes(members), { prefix: '/api/v1/member' });
  await app.register(
    async (member) => {
      member.addHook('onRequest', memberAuth(membersRepo));
      await member.register(memberRoutes(members));
      await member.register(memberBillingRoutes(checkout, db));
      await member.register(memberExercisesRoutes(exercises));
      await member.register(memberProgramsRoutes(programs));
      await member.register(workoutLogsRoutes(workoutLogs));
    },
    { prefix: '/api/v1/member' },
  );

  await app.register(reconcileRoutes(reconciler, deps.adminToken), { prefix: '/api/v1/admin' });
  await app.register(ledgerRoutes(payouts, deps.adminToken), { prefix: '/api/v1/admin' });
  await app.register(checkoutPages);
  await app.register(webhookRoutes({ stripe: processor.stripe, secrets: deps.webhookSecrets, inbox, tasks }), { prefix: '/api/v1' });

  // Retries of failed events, and events a crashed process had acknowledged but not done.
  const stopPolling = every(5000, () => inbox.drain(), logger, 'webhook inbox');
  // One node at a time reconciles (an advisory lock); the others skip that round.
  const stopReconciling =
    config.reconcileIntervalMs > 0
      ? every(config.reconcileIntervalMs, () => runExclusive(database, RECONCILE_LOCK_ID, () => reconciler.run()), logger, 'reconcile')
      : async () => {};
  app.addHook('onClose', async () => {
    await Promise.all([stopPolling(), stopReconciling()]);
    await tasks.idle();
  });

  return app;
}
