import { Type } from '@sinclair/typebox';
import { DateInput, Int64, Uuid } from '../../http/schemas.js';

/**
 * The creator metrics (spec: Creator metrics; DESIGN §7). Each field's description is its
 * definition, so a creator, an integrator and a test read the same thing.
 */
const Fraction = (description: string) => Type.Number({ minimum: 0, maximum: 1, description: `${description} A fraction from 0 to 1, rounded to 4 decimals; 0 when the denominator is 0.` });

const metricsFields = {
  communities_count: Int64({ minimum: 0, description: 'Your communities, paused ones included (they keep their members until their periods end). 1 for one community.' }),
  active_subscribers: Int64({
    minimum: 0,
    description:
      'Members holding at least one subscription that pays: `active` (one set to cancel at period end included, until it ends) or `past_due` (the processor is still retrying) — the subscriptions in MRR, as Stripe counts subscribers. Each member once. Subscriptions the processor holds as `incomplete`, `incomplete_expired`, `unpaid` or `paused` give no access and do not count.',
  }),
  trialing: Int64({ minimum: 0, description: 'Members holding a `trialing` subscription and none that pays (so no one counts in both).' }),
  mrr_cents: Int64({
    minimum: 0,
    description:
      'Monthly recurring revenue: every paying subscription (active, cancel at period end included, or past_due) at the price it is billed, normalised to a month (quarterly / 3, yearly / 12) and rounded half up per subscription, summed. Trials are not MRR, nor are `incomplete`, `unpaid` or `paused` subscriptions (nothing is being collected). Gross: the 10 % platform fee is not deducted.',
  }),
  this_month_revenue_cents: Int64({
    description:
      'Gross charges paid since the start of this UTC calendar month, minus refunds made since then (pending and succeeded; failed or canceled ones aside), as mirrored from the processor (charge and refund times are the processor’s). May be negative in a month of refunds and no charges.',
  }),
  platform_fee_pct: Type.Number({ description: 'The platform fee, in percent of each charge (10): you keep 90 %.' }),
  churn_rate_30d: Fraction(
    'Subscriber churn over the last 30 days (Stripe’s definition): members whose last live subscription ended in the window and who hold none now (live: `trialing`, `active`, `past_due`; a subscription that becomes `unpaid` or `paused` stops being live when the service learns it, one that starts `incomplete` never was), divided by the members live at the window’s start plus the members who became live in it (first subscriptions and members coming back), so it never exceeds 1. A window is (now − 30 days, now]: a subscription ending exactly 30 days ago is outside it.',
  ),
  engagement_rate_30d: Fraction(
    'Members holding a live subscription (paying or trialing) with activity in the last 30 days — a workout logged, a comment, kudos, a poll vote or a post view in your communities (recorded to within an hour) — divided by those members. Activity is kept per creator: in one community’s figures, a member of it active in another of your communities counts as engaged.',
  ),
  tier_mix: Type.Array(
    Type.Object({
      tier_id: Uuid,
      name: Type.String({ maxLength: 120, description: 'The tier’s name.' }),
      members: Int64({ minimum: 0, description: 'Paying members, each on the tier of their highest monthly-normalised paying subscription (the latest on a tie): the column sums to `active_subscribers`.' }),
      mrr_cents: Int64({ minimum: 0, description: 'MRR of the paying subscriptions on this tier: the column sums to `mrr_cents`.' }),
    }),
    { description: 'Every tier (active or not), by MRR, then members, then creation.' },
  ),
  growth_30d: Type.Object(
    {
      new_subscribers: Int64({
        minimum: 0,
        description: 'Members who became live in the last 30 days: a first subscription (in this scope; trials included), or a new one after none was live (a member coming back). `net_growth` is then the change in live members.',
      }),
      lost_subscribers: Int64({ minimum: 0, description: 'Members who churned in the last 30 days: the numerator of `churn_rate_30d`.' }),
      net_growth: Int64({ description: '`new_subscribers` − `lost_subscribers`.' }),
    },
    { description: 'Members gained and lost over the last 30 days.' },
  ),
};

export const CreatorMetrics = Type.Object(metricsFields, { $id: 'CreatorMetrics', title: 'CreatorMetrics' });

export const CommunityMetrics = Type.Object(
  {
    community_id: Uuid,
    ...metricsFields,
    engagement_30d: Type.Object(
      {
        posts: Int64({ minimum: 0, description: 'Posts published in the last 30 days, not deleted.' }),
        comments: Int64({ minimum: 0, description: 'Comments written in the last 30 days on posts not deleted.' }),
        kudos: Int64({ minimum: 0, description: 'Kudos given in the last 30 days (and not taken back) on posts not deleted.' }),
        views: Int64({ minimum: 0, description: 'Post views in the last 30 UTC days (one per member, post and day) on posts not deleted.' }),
      },
      { description: 'The community feed’s activity.' },
    ),
    top_challenges: Type.Array(
      Type.Object({ challenge_id: Uuid, name: Type.String({ maxLength: 200 }), participants_count: Int64({ minimum: 0 }) }),
      { maxItems: 3, description: 'The running challenges with the most participants, at most 3 (ties: the latest start).' },
    ),
  },
  { $id: 'CommunityMetrics', title: 'CommunityMetrics' },
);

export const CommunityMetricsParams = Type.Object({ cid: Uuid }, { additionalProperties: false });

export const CohortsQuery = Type.Object(
  {
    community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only this community (404 if it is not yours); members are then counted by their first subscription in it.' })),
    period: Type.Union([Type.Literal('week'), Type.Literal('month')], {
      default: 'month',
      description: 'Cohort and cell length: ISO weeks (Monday 00:00 UTC) or UTC calendar months (default).',
    }),
    periods: Type.Integer({ format: 'int32', minimum: 1, maximum: 24, default: 6, description: 'How many cohorts, the current period’s included: 1 to 24 (default 6).' }),
  },
  { additionalProperties: false },
);

export const Cohorts = Type.Object(
  {
    period: Type.Union([Type.Literal('week'), Type.Literal('month')]),
    cohorts: Type.Array(
      Type.Object({
        cohort_start: Type.String({ format: 'date-time', maxLength: 64, description: 'Start of the period the cohort’s members first subscribed in.' }),
        size: Int64({ minimum: 0, description: 'Members whose first subscription (in the scope) started in that period.' }),
        retention_pct: Type.Array(Type.Number({ minimum: 0, maximum: 100 }), {
          maxItems: 24,
          description:
            'Percent of the cohort, to one decimal, holding a subscription that is not canceled at the end of each period from its own on: the first cell is 100 (the cohort itself), the k-th the end of the k-th period after; the current period is measured now, so the newest cohort has one cell, each older one more. Empty for a cohort without members.',
        }),
      }),
      { maxItems: 24, description: 'Oldest cohort first.' },
    ),
  },
  { $id: 'Cohorts', title: 'Cohorts' },
);

export const HISTORY_MAX_SPAN_DAYS = 366;

export const HistoryQuery = Type.Object(
  {
    from: Type.Optional(DateInput('First UTC day (YYYY-MM-DD), inclusive; default 29 days before `to`.')),
    to: Type.Optional(DateInput('Last UTC day, inclusive; default today (its figures so far, `partial: true`).')),
    community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'One of your communities (404 otherwise); omitted: all of them together.' })),
  },
  { additionalProperties: false },
);

export const MetricsHistory = Type.Object(
  {
    community_id: Type.Union([Uuid, Type.Null()]),
    from: Type.String({ format: 'date', maxLength: 10 }),
    to: Type.String({ format: 'date', maxLength: 10 }),
    days: Type.Array(
      Type.Object({
        day: Type.String({ format: 'date', maxLength: 10 }),
        partial: Type.Boolean({
          description:
            'true for today only: its figures so far, computed when read from the same counters as the summary (`GET /creator-metrics`), so it moves until the day ends; false for a finished day, whose figures are stored once after it ended and do not change.',
        }),
        mrr_cents: Int64({ minimum: 0, description: 'MRR at the end of the day.' }),
        active_subscribers: Int64({ minimum: 0, description: 'Paying members at the end of the day.' }),
        trialing: Int64({ minimum: 0, description: 'Members trialing (and not paying) at the end of the day.' }),
        new_subscribers: Int64({ minimum: 0, description: 'Members who became live that day: a first subscription or a return after none was live.' }),
        lost_subscribers: Int64({ minimum: 0, description: 'Members whose last live subscription ended that day.' }),
        churn_rate_30d: Type.Number({ minimum: 0, maximum: 1, description: 'The 30-day subscriber churn as of the end of the day (see the summary), 4 decimals.' }),
      }),
      {
        maxItems: HISTORY_MAX_SPAN_DAYS,
        description:
          'Oldest first: one entry per finished UTC day of the range from the scope’s first subscription on, then, when the range includes today, today (`partial: true`) as the last entry. A finished day is stored once, after it ended: by the daily job, or by the first read that asks for it. A read computes the missing days of its range before answering, as many as fit its budget (every missing day of a 30-day range for a scope of up to 8,000 subscriptions; otherwise the most recent that fit); days left out are filled by the job within minutes (those of the last 90 days) and by later reads.',
      },
    ),
  },
  { $id: 'MetricsHistory', title: 'MetricsHistory' },
);
