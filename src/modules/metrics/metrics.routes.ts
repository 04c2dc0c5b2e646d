import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { authErrors, notFoundError, Ok } from '../../http/schemas.js';
import { Cohorts, CohortsQuery, CommunityMetrics, CommunityMetricsParams, CreatorMetrics, HistoryQuery, MetricsHistory } from './metrics.schemas.js';
import type { MetricsService } from './metrics.service.js';

const tags = ['Creator metrics'];
const CLOCK =
  'Windows are measured on the service’s clock at the moment of the request; every figure comes from one consistent snapshot of the mirror (subscriptions, payments and refunds as the processor reported them).';

/** The creator's dashboard: subscribers, money and engagement, overall and per community. */
export function metricsRoutes(service: MetricsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/creator-metrics',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: 'Your metrics',
          description: `Subscribers, MRR, this month's revenue, churn, engagement, tier mix and 30-day growth over all your communities. Each field's description is its definition. ${CLOCK}`,
          response: { 200: Ok(Type.Ref(CreatorMetrics)), ...authErrors },
        },
      },
      async (request) => ({ success: true as const, data: await service.summary(creatorOf(request)) }),
    );

    // Before /creator-metrics/:cid in reading order; the router prefers the static segment anyway.
    app.get(
      '/creator-metrics/cohorts',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: 'Retention cohorts',
          description:
            'Members grouped by the period (ISO week or UTC month) of their first subscription — in one community with `community_id` — and, for each later period, the percentage still holding a subscription that is not canceled at its end (the current period: now). A member who left and came back counts again once they hold one. `periods` counts the cohorts, the current period’s included.',
          querystring: CohortsQuery,
          response: { 200: Ok(Type.Ref(Cohorts)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.cohorts(creatorOf(request), request.query) }),
    );

    app.get(
      '/creator-metrics/history',
      {
        schema: {
          tags,
          summary: 'Daily metrics history',
          description:
            'MRR, paying and trialing members, new and lost members and the 30-day churn at the end of each finished UTC day between `from` and `to` (inclusive, at most 366 days a request; default the 30 days ending today), for all your communities or one, and today so far as the last entry (`partial: true`) when the range includes it. Each finished day is stored once after it ends, by a job or by the first read asking for it, reconstructed from the subscription mirror (a subscription counts as live from its start to its end or lapse, trialing until its trial ends, paying otherwise); today is computed at read from the counters the summary uses. What past days can show: MRR counts each paying subscription at the price recorded for it that day, known from the day the mirror recorded it (prices recorded since the member history began; billing periods since migration 0031, earlier records at the current period). A day before a subscription\'s first recorded price shows its earliest recorded one, and a subscription never recorded shows its current price throughout. A past_due member counts as paying, as in the summary: past_due spells are not kept.',
          querystring: HistoryQuery,
          response: { 200: Ok(Type.Ref(MetricsHistory)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.history(creatorOf(request), request.query) }),
    );

    app.get(
      '/creator-metrics/:cid',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: "A community's metrics",
          description: `The same figures for one of your communities (404 if it is not yours; members and churn are counted within the community), plus its feed's activity in 30 days and its top 3 running challenges by participants. ${CLOCK}`,
          params: CommunityMetricsParams,
          response: { 200: Ok(Type.Ref(CommunityMetrics)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await service.community(creatorOf(request), request.params.cid) }),
    );
  };
}
