import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';

/** Where the figures are taken: all of a creator's communities, or one of them. */
export interface Scope {
  creatorId: string;
  communityId?: string;
}

/** The clock's marks the figures are computed against (the service's wall clock). */
export interface Window {
  now: Date;
  /** now − 30 days: the start of the 30-day windows. */
  from: Date;
  /** The first instants of the current and of the next UTC calendar month. */
  monthStart: Date;
  nextMonthStart: Date;
}

export interface SubscriberFigures {
  active_subscribers: number;
  trialing: number;
  mrr_cents: string;
  new_subscribers: number;
  lost_subscribers: number;
  live_at_start: number;
  engaged: number;
}

export interface TierFigures {
  tier_id: string;
  name: string;
  members: number;
  mrr_cents: string;
}

/**
 * The creator metrics, computed from the subscription mirror, the payments and refunds
 * mirrors and the member directory (DESIGN §7 definitions; each is spelled out in the
 * OpenAPI description of its field, metrics.schemas.ts).
 *
 * A subscription *pays* while it is active (cancel at period end included) or past_due: it
 * is in MRR. A member is *live* while they hold a subscription that is not canceled. A
 * canceled subscription ended at `ended_at` (the processor's time), else `canceled_at`.
 */
export function createMetricsRepo(db: Db) {
  const inScope = (s: Scope, alias: string) =>
    sql`${sql.ref(`${alias}.creator_id`)} = ${s.creatorId} and (${s.communityId ?? null}::uuid is null or ${sql.ref(`${alias}.community_id`)} = ${s.communityId ?? null}::uuid)`;

  return {
    async subscribers(scope: Scope, w: Window, trx: Executor = db): Promise<SubscriberFigures> {
      const { rows } = await sql<SubscriberFigures>`
        with s as (
          select s.member_id, s.status, s.price_cents, s.billing_period, s.created_at,
                 case when s.status = 'canceled' then coalesce(s.ended_at, s.canceled_at, s.updated_at) end as ended_at
          from subscriptions s where ${inScope(scope, 's')}
        ),
        m as (
          select member_id,
                 bool_or(status in ('active', 'past_due')) as paying,
                 bool_or(status = 'trialing') as trialing,
                 bool_or(status <> 'canceled') as live,
                 bool_or(created_at <= ${w.from} and (ended_at is null or ended_at > ${w.from})) as live_at_start,
                 -- Any live spell in the window that did not start before it began with a subscription
                 -- created in it: first subscriptions, and members coming back.
                 bool_or(created_at > ${w.from}) as started_in_window,
                 max(ended_at) as last_ended_at
          from s group by member_id
        )
        select (count(*) filter (where paying))::int as active_subscribers,
               (count(*) filter (where trialing and not paying))::int as trialing,
               (select coalesce(sum(monthly_cents(price_cents, billing_period)), 0) from s where status in ('active', 'past_due'))::bigint as mrr_cents,
               (count(*) filter (where started_in_window and not live_at_start))::int as new_subscribers,
               (count(*) filter (where not live and last_ended_at > ${w.from}))::int as lost_subscribers,
               (count(*) filter (where live_at_start))::int as live_at_start,
               (count(*) filter (where live and exists (
                  select 1 from creator_members cm where cm.creator_id = ${scope.creatorId} and cm.member_id = m.member_id and cm.last_active_at > ${w.from})))::int as engaged
        from m`.execute(trx);
      return rows[0]!;
    },

    /**
     * Per tier of the scope: its paying members (each paying member counted once, on the tier
     * of their highest monthly-normalised paying subscription, the latest on a tie) and its MRR
     * (every paying subscription on the tier), so both columns sum to the totals.
     */
    async tierMix(scope: Scope, trx: Executor = db): Promise<TierFigures[]> {
      const { rows } = await sql<TierFigures>`
        with paying as (
          select s.member_id, s.tier_id, monthly_cents(s.price_cents, s.billing_period) as mrr, s.created_at, s.id
          from subscriptions s where ${inScope(scope, 's')} and s.status in ('active', 'past_due')
        ),
        -- Materialized: computed and sorted once, not once per tier below.
        home as materialized (
          select distinct on (member_id) member_id, tier_id from paying order by member_id, mrr desc, created_at desc, id desc
        )
        select t.id as tier_id, t.name,
               (select count(*) from home h where h.tier_id = t.id)::int as members,
               (select coalesce(sum(p.mrr), 0) from paying p where p.tier_id = t.id)::bigint as mrr_cents
        from tiers t where ${inScope(scope, 't')}
        order by mrr_cents desc, members desc, t.created_at, t.id`.execute(trx);
      return rows;
    },

    /** Gross charges paid this UTC month minus refunds made this month (failed or canceled refunds aside). */
    async monthRevenue(scope: Scope, w: Window, trx: Executor = db): Promise<string> {
      const { rows } = await sql<{ cents: string }>`
        select ((select coalesce(sum(p.amount_cents), 0) from payments p join subscriptions s on s.id = p.subscription_id
                 where p.creator_id = ${scope.creatorId} and ${inScope(scope, 's')} and p.paid_at >= ${w.monthStart} and p.paid_at < ${w.nextMonthStart})
              - (select coalesce(sum(r.amount_cents), 0) from refunds r join subscriptions s on s.id = r.subscription_id
                 where r.creator_id = ${scope.creatorId} and ${inScope(scope, 's')} and r.created_at >= ${w.monthStart} and r.created_at < ${w.nextMonthStart}
                   and r.status not in ('failed', 'canceled')))::bigint as cents`.execute(trx);
      return rows[0]!.cents;
    },

    async communitiesCount(creatorId: string, trx: Executor = db) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from communities where creator_id = ${creatorId}`.execute(trx);
      return rows[0]!.n;
    },

    /** The community's feed in the 30-day window: posts written, and comments, kudos and views on posts not deleted. */
    async feedEngagement(communityId: string, w: Window, trx: Executor = db) {
      const { rows } = await sql<{ posts: number; comments: number; kudos: number; views: number }>`
        select (select count(*) from posts p where p.community_id = ${communityId} and p.deleted_at is null and p.created_at > ${w.from})::int as posts,
               (select count(*) from post_comments c join posts p on p.id = c.post_id
                where p.community_id = ${communityId} and p.deleted_at is null and c.created_at > ${w.from})::int as comments,
               (select count(*) from post_kudos k join posts p on p.id = k.post_id
                where p.community_id = ${communityId} and p.deleted_at is null and k.created_at > ${w.from})::int as kudos,
               (select count(*) from post_views v join posts p on p.id = v.post_id
                where p.community_id = ${communityId} and p.deleted_at is null and v.day > ${w.from.toISOString().slice(0, 10)}::date)::int as views`.execute(trx);
      return rows[0]!;
    },

    /**
     * Retention cells of cohorts by first subscription in the scope: per cohort (index into
     * `starts`) and each period from its own to the last, the members of the cohort holding a
     * subscription not canceled at that period's end (the current period: at `now`).
     */
    async cohortCells(scope: Scope, starts: Date[], ends: Date[], now: Date, trx: Executor = db) {
      const live = (at: ReturnType<typeof sql>) => sql`exists (select 1 from subscriptions s where ${inScope(scope, 's')} and s.member_id = c.member_id
        and s.created_at <= ${at} and (s.status <> 'canceled' or coalesce(s.ended_at, s.canceled_at, s.updated_at) > ${at}))`;
      const { rows } = await sql<{ cohort: number; period: number; size: number; retained: number }>`
        with b as (select start_at, end_at, n::int - 1 as n from unnest(${starts}::timestamptz[], ${ends}::timestamptz[]) with ordinality as b(start_at, end_at, n)),
        first as (select s.member_id, min(s.created_at) as first_at from subscriptions s where ${inScope(scope, 's')} group by s.member_id),
        c as (select f.member_id, b.n as cohort from first f join b on f.first_at >= b.start_at and f.first_at < b.end_at)
        select c.cohort, b.n as period, count(*)::int as size,
               (count(*) filter (where ${live(sql`least(b.end_at, ${now}::timestamptz)`)}))::int as retained
        from c join b on b.n >= c.cohort
        group by c.cohort, b.n order by c.cohort, b.n`.execute(trx);
      return rows;
    },

    /** The community's running challenges with the most participants (ties: newest start). */
    async topChallenges(communityId: string, w: Window, limit: number, trx: Executor = db) {
      return trx
        .selectFrom('challenges')
        .select(['id as challenge_id', 'name', 'participants_count'])
        .where('community_id', '=', communityId)
        .where('canceled_at', 'is', null)
        .where('starts_at', '<=', w.now)
        .where('ends_at', '>', w.now)
        .orderBy('participants_count', 'desc')
        .orderBy('starts_at', 'desc')
        .orderBy('id')
        .limit(limit)
        .execute();
    },
  };
}

export type MetricsRepo = ReturnType<typeof createMetricsRepo>;
