import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import type { ReplicaSet } from './db/replicas.js';
import { DASHBOARD_DIST } from './paths.js';
import { creatorAuth } from './http/auth.js';
import type { Processor } from './processor/processor.js';
import { accountPages } from './modules/account/account.pages.js';
import { createAccountRepo } from './modules/account/account.repo.js';
import { accountRoutes } from './modules/account/account.routes.js';
import { createAccountService } from './modules/account/account.service.js';
import { createAccountSync } from './modules/account/account-sync.js';
import { adminRoutes } from './modules/admin/admin.routes.js';
import { createAdminService } from './modules/admin/admin.service.js';
import { apiKeysRoutes } from './modules/api-keys/api-keys.routes.js';
import { createApiKeysService } from './modules/api-keys/api-keys.service.js';
import { communitiesRoutes } from './modules/communities/communities.routes.js';
import { createCommunitiesRepo } from './modules/communities/communities.repo.js';
import { createCommunitiesService } from './modules/communities/communities.service.js';
import { createCreatorsRepo } from './modules/creators/creators.repo.js';
import { dashboardRoutes } from './modules/dashboard/dashboard.routes.js';
import { createSessionsRepo } from './modules/dashboard-sessions/sessions.repo.js';
import { adminLoginLinkRoutes, sessionsRoutes } from './modules/dashboard-sessions/sessions.routes.js';
import { createSessionsService } from './modules/dashboard-sessions/sessions.service.js';
import { signInPage } from './modules/dashboard-sessions/sign-in.page.js';
import { createDiscoverRepo } from './modules/discover/discover.repo.js';
import { discoverRoutes } from './modules/discover/discover.routes.js';
import { createDiscoverService } from './modules/discover/discover.service.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { memberAuth } from './modules/members/member-auth.js';
import { createMembersRepo } from './modules/members/members.repo.js';
import { memberPublicRoutes, memberRoutes } from './modules/members/members.routes.js';
import { createMembersService } from './modules/members/members.service.js';
import { createTiersRepo } from './modules/tiers/tiers.repo.js';
import { tiersRoutes } from './modules/tiers/tiers.routes.js';
import { createTiersService } from './modules/tiers/tiers.service.js';
import { startJobs } from './jobs/schedule.js';
import { TaskRunner } from './jobs/tasks.js';
import { checkoutPages } from './modules/checkout/checkout.pages.js';
import { memberBillingRoutes } from './modules/checkout/checkout.routes.js';
import { createCheckoutRepo } from './modules/checkout/checkout.repo.js';
import { createCheckoutService } from './modules/checkout/checkout.service.js';
import { createMemberBillingRepo } from './modules/member-billing/member-billing.repo.js';
import { memberSelfServiceRoutes } from './modules/member-billing/member-billing.routes.js';
import { createMemberBillingService } from './modules/member-billing/member-billing.service.js';
import { reconcileRoutes } from './modules/reconcile/reconcile.routes.js';
import { createReconciler } from './modules/reconcile/reconcile.service.js';
import { ledgerRoutes } from './modules/payouts/ledger.routes.js';
import { createBalanceCopy } from './modules/payouts/balance-copy.js';
import { createPayoutSync } from './modules/payouts/payout-sync.js';
import { payoutsRoutes } from './modules/payouts/payouts.routes.js';
import { createPayoutsRepo } from './modules/payouts/payouts.repo.js';
import { createPayoutsService } from './modules/payouts/payouts.service.js';
import { createSubscriptionsRepo } from './modules/subscriptions/subscriptions.repo.js';
import { subscriptionsRoutes } from './modules/subscriptions/subscriptions.routes.js';
import { createSubscriptionsService } from './modules/subscriptions/subscriptions.service.js';
import { createSubscriptionSync } from './modules/subscriptions/sync.js';
import { createPaymentsSync } from './modules/subscriptions/payments-sync.js';
import { createEventHandlers } from './modules/webhooks/handlers.js';
import { createExercisesRepo } from './modules/exercises/exercises.repo.js';
import { exercisesRoutes, memberExercisesRoutes } from './modules/exercises/exercises.routes.js';
import { createExercisesService } from './modules/exercises/exercises.service.js';
import { memberProgramsRoutes } from './modules/programs/programs.member-routes.js';
import { createProgramsRepo } from './modules/programs/programs.repo.js';
import { programsRoutes } from './modules/programs/programs.routes.js';
import { createProgramsService } from './modules/programs/programs.service.js';
import { createDirectoryRepo } from './modules/memberships/directory.repo.js';
import { createDirectoryService } from './modules/memberships/directory.service.js';
import { createMembersExport } from './modules/memberships/export.service.js';
import { membershipsRoutes } from './modules/memberships/memberships.routes.js';
import { createRecordRepo } from './modules/memberships/record.repo.js';
import { createRecordService } from './modules/memberships/record.service.js';
import { createTrainingViewRepo } from './modules/workout-logs/creator-view.repo.js';
import { createWorkoutLogsRepo } from './modules/workout-logs/workout-logs.repo.js';
import { workoutLogsRoutes } from './modules/workout-logs/workout-logs.routes.js';
import { createLoggingRepo } from './modules/workout-logs/logging.repo.js';
import { createWorkoutLogsService } from './modules/workout-logs/workout-logs.service.js';
import { createInbox } from './modules/webhooks/inbox.js';
import { challengesRoutes } from './modules/challenges/challenges.routes.js';
import { createChallengesRepo } from './modules/challenges/challenges.repo.js';
import { createChallengesService } from './modules/challenges/challenges.service.js';
import { memberChallengesRoutes } from './modules/challenges/member-challenges.routes.js';
import { createMemberChallengesService } from './modules/challenges/member-challenges.service.js';
import { createStandings } from './modules/challenges/standings.js';
import { createActivityRepo } from './modules/activity/activity.js';
import { createEngagementRepo } from './modules/posts/engagement.repo.js';
import { memberPostsRoutes } from './modules/posts/member-posts.routes.js';
import { createMemberPostsService } from './modules/posts/member-posts.service.js';
import { postsRoutes } from './modules/posts/posts.routes.js';
import { createPostsRepo } from './modules/posts/posts.repo.js';
import { createPostsService } from './modules/posts/posts.service.js';
import { createMetricsRepo } from './modules/metrics/metrics.repo.js';
import { createMemberSubscriptionsRepo } from './modules/member-subscriptions/member-subscriptions.repo.js';
import { memberSubscriptionsRoutes } from './modules/member-subscriptions/member-subscriptions.routes.js';
import { createMemberSubscriptionsService } from './modules/member-subscriptions/member-subscriptions.service.js';
import { metricsRoutes } from './modules/metrics/metrics.routes.js';
import { createMetricsService } from './modules/metrics/metrics.service.js';
import { createMetricsAggregates } from './modules/metrics/aggregates.js';
import { createMetricsHistory } from './modules/metrics/history.js';
import { webhookEventsRoutes } from './modules/webhooks/webhook-events.routes.js';
import { webhookRoutes } from './modules/webhooks/webhooks.routes.js';
import { eventsFeature } from './modules/events/events.feature.js';
import { purgeRetained } from './retention.js';

/** What the features are built from (app.ts adds the logger). */
export interface FeatureDeps {
  config: Config;
  database: DatabaseHandle;
  adminToken: string;
  /** The payment processor (real Stripe or the simulator), through the stripe SDK. */
  processor: Processor;
  /** Webhook signing secrets; several while one is being rolled. */
  webhookSecrets: string[];
  /** The service's wall clock (the processor keeps its own); tests move it. */
  now?: () => Date;
  /** Read replicas (DATABASE_REPLICA_URL) and their state; app.ts routes the heavy reads to them. */
  replicas?: ReplicaSet;
  /** Where the built dashboard is (default dist/dashboard); tests build one of their own. */
  dashboardDir?: string;
}

/**
 * Every feature module with its dependencies: services built once, routes registered under
 * their prefixes and auth, and the background pollers. The HTTP conventions they rely on
 * are set up before this runs (app.ts).
 */
export async function registerFeatures(app: FastifyInstance, deps: FeatureDeps, background: { purgeIdempotencyKeys(): Promise<unknown> }): Promise<void> {
  const { config, database } = deps;
  const db = database.db;
  const { processor } = deps;
  const now = deps.now ?? (() => new Date());
  const logger = app.log as unknown as Logger;
  const tasks = new TaskRunner(logger);
  app.decorate('tasks', tasks);
  const creators = createCreatorsRepo(db);
  const checkoutRepo = createCheckoutRepo(db);
  const payoutsRepo = createPayoutsRepo(db);
  const communitiesRepo = createCommunitiesRepo(db);
  const sync = createSubscriptionSync({ db, processor, logger, now });
  const subscriptions = createSubscriptionsService({ db, subscriptions: createSubscriptionsRepo(db), creators, processor, sync, logger });
  const communities = createCommunitiesService({
    db,
    communities: communitiesRepo,
    onPauseChanged: (creatorId, communityId, paused) =>
      tasks.run(`community ${communityId} ${paused ? 'pause' : 'resume'}`, () => subscriptions.convergePause(creatorId, communityId)),
  });
  const payoutSync = createPayoutSync({ db, processor, sync });
  const accountRepo = createAccountRepo(db);
  const accountSync = createAccountSync({ db, processor, accounts: accountRepo, nextSeq: sync.nextSeq });
  const accounts = createAccountService({ db, accounts: accountRepo, sync: accountSync, processor, publicUrl: config.publicUrl });
  const balanceCopy = createBalanceCopy({ db, processor });
  const payouts = createPayoutsService({ db, payouts: payoutsRepo, processor, accounts, payoutSync, balanceCopy, currency: config.currency, minimumCents: config.manualPayoutMinCents });
  const payments = createPaymentsSync({ db, processor });
  const inbox = createInbox({
    db,
    handlers: createEventHandlers({ processor, sync, payoutSync, payments, checkout: checkoutRepo, accounts: accountSync }),
    logger,
    maxAttempts: config.webhooks.maxAttempts,
    maxConcurrent: config.webhooks.concurrency,
  });
  app.gaugeMetric('webhook_events_dead', 'Processor events parked after their last attempt (GET /api/v1/admin/webhook-events?status=dead)', () => inbox.deadCount());
  const reconciler = createReconciler({ db, creators, communities: communitiesRepo, processor, sync, payoutSync, accountSync, balanceCopy, payments, subscriptions, inbox, logger, now });
  app.decorate('reconciler', reconciler);
  const checkout = createCheckoutService({ db, checkout: checkoutRepo, processor, accounts, successUrl: config.checkout.successUrl, cancelUrl: config.checkout.cancelUrl });
  const memberBilling = createMemberBillingService({ db, billing: createMemberBillingRepo(db), processor, sync, portalReturnUrl: config.checkout.portalReturnUrl });
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
  const directoryRepo = createDirectoryRepo(db);
  const directory = createDirectoryService({ directory: directoryRepo, now, exactCountLimit: config.membersExactCountLimit });
  const membersExport = createMembersExport({ database, directory: directoryRepo, now, limits: config.membersExport });
  app.decorate('membersExport', membersExport);
  const logging = createLoggingRepo(db, { onBatch: app.batchSizeMetric('workout_log') });
  const workoutLogs = createWorkoutLogsService({ db, logs: createWorkoutLogsRepo(db), logging, now });
  const challengesRepo = createChallengesRepo(db);
  const challenges = createChallengesService({ db, challenges: challengesRepo, communities: communitiesRepo, exercises: exercisesRepo, now });
  const memberChallenges = createMemberChallengesService({ db, challenges: challengesRepo, lockHistory: logging.lockHistory, now });
  const standings = createStandings({ db, now });
  app.decorate('standings', standings);
  const postsRepo = createPostsRepo(db);
  const engagement = createEngagementRepo(db);
  const posts = createPostsService({ db, posts: postsRepo, engagement, communities: communitiesRepo, now });
  const memberPosts = createMemberPostsService({ db, posts: postsRepo, engagement, activity: createActivityRepo(), now, onReadBatch: app.batchSizeMetric('member_post') });
  const history = createMetricsHistory({ db, now });
  const aggregates = createMetricsAggregates({ now });
  app.decorate('metricsCounters', aggregates);
  app.decorate('metricsHistory', history);
  const memberRecords = createRecordService({ directory: directoryRepo, records: createRecordRepo(db), training: createTrainingViewRepo(db), challenges, now });

  const events = eventsFeature(app, { db, config });
  app.gaugeMetric('outgoing_deliveries_due', 'Deliveries to creators\' webhook endpoints due now and not yet sent (growing: the senders fall behind)', async () => (await events.backlog()).due);
  app.gaugeMetric('outgoing_deliveries_dead', 'Deliveries to creators\' webhook endpoints whose attempts ran out (GET /api/v1/webhook-endpoints/{id}/deliveries?status=dead)', async () => (await events.backlog()).dead);
  const sessionsRepo = createSessionsRepo(db);
  const dashboardSessions = createSessionsService({ db, sessions: sessionsRepo, creators, publicUrl: config.publicUrl });

  await app.register(healthRoutes(database.ping, () => deps.replicas?.statuses() ?? []));
  await app.register(adminRoutes(createAdminService({ db, creators, processor, accounts: accountSync, logger }), deps.adminToken), { prefix: '/api/v1/admin' });
  await app.register(
    async (api) => {
      api.addHook('onRequest', creatorAuth(creators, tasks, { sessions: sessionsRepo, publicUrl: config.publicUrl }));
      await api.register(apiKeysRoutes(createApiKeysService({ db, creators })));
      await api.register(sessionsRoutes(dashboardSessions));
      await api.register(accountRoutes(accounts));
      await api.register(communitiesRoutes(communities));
      await api.register(tiersRoutes(tiers));
      await api.register(subscriptionsRoutes(subscriptions));
      await api.register(payoutsRoutes(payouts));
      await api.register(exercisesRoutes(exercises));
      await api.register(programsRoutes(programs));
      await api.register(membershipsRoutes(directory, memberRecords, membersExport));
      await api.register(challengesRoutes(challenges));
      await api.register(postsRoutes(posts));
      await api.register(events.routes);
      await api.register(metricsRoutes(createMetricsService({ db, metrics: createMetricsRepo(db), communities: communitiesRepo, history, now })));
    },
    { prefix: '/api/v1' },
  );
  await app.register(discoverRoutes(createDiscoverService({ discover: createDiscoverRepo(db) })), { prefix: '/api/v1/discover' });
  const membersRepo = createMembersRepo(db);
  const members = createMembersService({ db, members: membersRepo });
  await app.register(memberPublicRoutes(members, { adminToken: deps.adminToken }), { prefix: '/api/v1/member' });
  await app.register(
    async (member) => {
      member.addHook('onRequest', memberAuth(membersRepo, app.batchSizeMetric('member_token')));
      await member.register(memberRoutes(members));
      await member.register(memberBillingRoutes(checkout));
      await member.register(memberSelfServiceRoutes(memberBilling));
      await member.register(memberExercisesRoutes(exercises));
      await member.register(memberProgramsRoutes(programs));
      await member.register(workoutLogsRoutes(workoutLogs));
      await member.register(memberChallengesRoutes(memberChallenges));
      await member.register(memberPostsRoutes(memberPosts));
      await member.register(memberSubscriptionsRoutes(createMemberSubscriptionsService({ db, repo: createMemberSubscriptionsRepo(db), processor, sync })));
    },
    { prefix: '/api/v1/member' },
  );

  await app.register(reconcileRoutes(reconciler, deps.adminToken), { prefix: '/api/v1/admin' });
  await app.register(ledgerRoutes(payouts, deps.adminToken), { prefix: '/api/v1/admin' });
  await app.register(webhookEventsRoutes(inbox, deps.adminToken), { prefix: '/api/v1/admin' });
  await app.register(adminLoginLinkRoutes(dashboardSessions, deps.adminToken), { prefix: '/api/v1/admin' });
  await app.register(checkoutPages);
  await app.register(accountPages(accounts));
  await app.register(dashboardRoutes(deps.dashboardDir ?? DASHBOARD_DIST));
  await app.register(signInPage(dashboardSessions));
  await app.register(webhookRoutes({ stripe: processor.stripe, secrets: deps.webhookSecrets, inbox, tasks }), { prefix: '/api/v1' });

  // Scheduled work, on nodes that run jobs (JOBS; `npm run worker` runs them and serves no API).
  const stopJobs = config.jobs
    ? startJobs({
        config,
        database,
        logger,
        tasks,
        work: {
          inboxDrain: () => inbox.drain(),
          purgeRetained: () => purgeRetained(inbox, membersRepo, config.webhooks.retentionDays, accountRepo, sessionsRepo, app.events),
          purgeIdempotencyKeys: background.purgeIdempotencyKeys,
          reconcile: () => reconciler.run(),
          rankChallenges: () => standings.run().then(() => standings.finishEnded()),
          fillMetricsHistory: () => history.run(),
          buildMissingCounters: () => aggregates.buildMissing(db),
          foldActivity: () => aggregates.foldAll(db),
          sendEvents: () => app.events.drain(),
          // Automatic previews a rule change left stale (migration 0019), recomputed once (reads compute them meanwhile).
          refreshPreviews: (stopping) => posts.refreshStalePreviews(stopping),
        },
      })
    : undefined;
  // A shutdown stops the jobs (between batches, sends in flight finished), then waits for what they started.
  app.addHook('preClose', async () => stopJobs?.halt());
  app.addHook('onClose', async () => {
    await Promise.all([stopJobs?.stop(), events.stop()]);
    await tasks.idle();
  });
}
