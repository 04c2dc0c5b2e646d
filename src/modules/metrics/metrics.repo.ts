import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';
import { ALL_COMMUNITIES, FOLD_MARGIN } from './counters.js';

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
 * The creator metrics (DESIGN §7 definitions; each is spelled out in the OpenAPI description of
 * its field, metrics.schemas.ts), read from the counters the subscription mirror keeps
 * (aggregates.ts, migrations/0017) rather than by scanning the mirror: a summary at a million
 * subscriptions is a few dozen counter rows and the spells of two partial days.
 *
 * A member is *live* in a scope while a spell of theirs is open there; *paying* while they hold
 * an active (cancel at period end included) or past_due subscription, which is in MRR.
 */
export function createMetricsRepo(db: Db) {
  const scopeId = (s: Scope) => s.communityId ?? ALL_COMMUNITIES;
  const tiersOf = (s: Scope) =>
    sql`t.creator_id = ${s.creatorId} and (${s.communityId ?? null}::uuid is null or t.community_id = ${s.communityId ?? null}::uuid)`;
  /** The window's partial first day: its date, and the instant it ends (counts run from there on). */
  const firstDay = (w: Window) => {
    const d0 = w.from.toISOString().slice(0, 10);
    return { d0, edge: new Date(Date.parse(`${d0}T00:00:00Z`) + 86_400_000) };
  };
  const membersColumn = (s: Scope) => sql.ref(s.communityId ? 'mt.members_community' : 'mt.members_all');

  return {
    /**
     * Live members now and the spells that started and ended since `w.from`: 30 day rows, plus
     * the spells of the partial day `w.from` falls in. Members live at the window's start are
     * those live now, less spells started since, plus spells ended since (a member's spells do
     * not overlap); lost are members whose last spell ended in the window; new follows from
     * new − lost = live now − live at the start.
     */
    async subscribers(scope: Scope, w: Window, trx: Executor = db): Promise<SubscriberFigures> {
      const sid = scopeId(scope);
      const { d0, edge } = firstDay(w);
      const inEdge = (col: string) => sql`${sql.ref(`x.${col}`)} > ${w.from} and ${sql.ref(`x.${col}`)} < ${edge}`;
      const { rows } = await sql<{ paying: number; trialing: number; mrr_cents: string; starts: number; ends: number; final_ends: number }>`
        select tm.paying::int as paying, tm.mrr_cents::bigint as mrr_cents,
          coalesce((select trialing from metrics_scopes where creator_id = ${scope.creatorId} and scope_id = ${sid}), 0) as trialing,
          (d.starts + (select count(*) from metrics_spells x where x.creator_id = ${scope.creatorId} and x.scope_id = ${sid} and ${inEdge('started_at')}))::int as starts,
          (d.ends + (select count(*) from metrics_spells x where x.creator_id = ${scope.creatorId} and x.scope_id = ${sid} and ${inEdge('ended_at')}))::int as ends,
          (d.final_ends + (select count(*) from metrics_spells x where x.creator_id = ${scope.creatorId} and x.scope_id = ${sid} and ${inEdge('ended_at')} and x.last))::int as final_ends
        from (select coalesce(sum(${membersColumn(scope)}), 0) as paying, coalesce(sum(mt.mrr_cents), 0) as mrr_cents
              from tiers t join metrics_tiers mt on mt.creator_id = t.creator_id and mt.tier_id = t.id where ${tiersOf(scope)}) tm,
             (select coalesce(sum(starts), 0) as starts, coalesce(sum(ends), 0) as ends, coalesce(sum(final_ends), 0) as final_ends
              from metrics_days where creator_id = ${scope.creatorId} and scope_id = ${sid} and day > ${d0}::date) d`.execute(trx);
      const r = rows[0]!;
      const live = r.paying + r.trialing;
      const liveAtStart = live - r.starts + r.ends;
      return {
        active_subscribers: r.paying,
        trialing: r.trialing,
        mrr_cents: r.mrr_cents,
        new_subscribers: r.final_ends + live - liveAtStart,
        lost_subscribers: r.final_ends,
        live_at_start: liveAtStart,
        engaged: await this.engaged(scope, w, trx),
      };
    },

    /**
     * Live members of the scope with activity (creator-wide, DESIGN §7) after `w.from`: the
     * folded day counts after the window's first day (metrics_days.active), corrected for the
     * members active since the last fold (their folded day may be old), plus the members whose
     * latest activity falls in the window's partial first day.
     */
    async engaged(scope: Scope, w: Window, trx: Executor = db): Promise<number> {
      const sid = scopeId(scope);
      const { d0, edge } = firstDay(w);
      // Read first, so the planner sees how recent the fold is (a handful of members since, not a third of them).
      const folded = await trx
        .selectFrom('metrics_scopes')
        .select(sql<Date | null>`activity_folded_at - ${FOLD_MARGIN}`.as('since'))
        .where('creator_id', '=', scope.creatorId)
        .where('scope_id', '=', ALL_COMMUNITIES)
        .executeTakeFirst();
      if (!folded) return 0;
      const since = folded.since ?? new Date(0);
      // Creator-wide, the activity row says whether the member is live (a copy of the directory's
      // state, migrations/0032), so the partial day is counted from an index alone; in a community, per member.
      const live = scope.communityId
        ? sql`exists (select 1 from metrics_members m where m.creator_id = cm.creator_id and m.scope_id = ${sid} and m.member_id = cm.member_id
                        and (m.trialing or m.home_tier_id is not null))`
        : sql`not cm.churned`;
      const { rows } = await sql<{ n: number }>`
        with recent as materialized (
          select cm.last_active_at as at, m.active_day from member_activity cm
          join metrics_members m on m.creator_id = cm.creator_id and m.scope_id = ${sid} and m.member_id = cm.member_id
          where cm.creator_id = ${scope.creatorId} and cm.last_active_at > ${since} and (m.trialing or m.home_tier_id is not null)
        )
        select ((select coalesce(sum(active), 0) from metrics_days where creator_id = ${scope.creatorId} and scope_id = ${sid} and day > ${d0}::date)
                - (select count(*) from recent where active_day > ${d0}::date)
                + (select count(*) from recent where at >= ${edge})
                + (select count(*) from member_activity cm
                   where cm.creator_id = ${scope.creatorId} and cm.last_active_at > ${w.from} and cm.last_active_at < ${edge} and ${live}))::int as n`.execute(trx);
      return rows[0]!.n;
    },

    /**
     * Per tier of the scope: its paying members (each paying member counted once, on the tier
     * of their highest monthly-normalised paying subscription, the latest on a tie) and its MRR
     * (every paying subscription on the tier), so both columns sum to the totals.
     */
    async tierMix(scope: Scope, trx: Executor = db): Promise<TierFigures[]> {
      const { rows } = await sql<TierFigures>`
        select t.id as tier_id, t.name, coalesce(${membersColumn(scope)}, 0)::int as members, coalesce(mt.mrr_cents, 0)::bigint as mrr_cents
        from tiers t left join metrics_tiers mt on mt.creator_id = t.creator_id and mt.tier_id = t.id
        where ${tiersOf(scope)}
        order by mrr_cents desc, members desc, t.created_at, t.id`.execute(trx);
      return rows;
    },

    /** Gross charges paid this UTC month minus refunds made this month (failed or canceled refunds aside). */
    async monthRevenue(scope: Scope, w: Window, trx: Executor = db): Promise<string> {
      const { rows } = await sql<{ cents: string }>`
        select coalesce(sum(charged_cents - refunded_cents), 0)::bigint as cents from metrics_revenue
        where creator_id = ${scope.creatorId} and (${scope.communityId ?? null}::uuid is null or community_id = ${scope.communityId ?? null}::uuid)
          and month = ${w.monthStart.toISOString().slice(0, 10)}::date`.execute(trx);
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
     * Retention cells of cohorts by first spell in the scope: per cohort (index into `starts`)
     * and each period from its own to the last, the members of the cohort live at that period's
     * end (the current period: at `now`). Live at an instant t = spells started at or before t
     * less spells ended at or before t: the kept counts per period give "before the period's
     * end", the spells starting or ending exactly at an end (or, in the current period, after
     * `now`) correct them.
     */
    async cohortCells(scope: Scope, period: 'week' | 'month', starts: Date[], ends: Date[], now: Date, trx: Executor = db) {
      const sid = scopeId(scope);
      const day = (d: Date) => d.toISOString().slice(0, 10);
      const last = ends[ends.length - 1]!;
      const { rows: buckets } = await sql<{ cohort: string; at: string; members: number; starts: number; ends: number }>`
        select cohort::text, at::text, members, starts, ends from metrics_cohorts
        where creator_id = ${scope.creatorId} and scope_id = ${sid} and period = ${period} and cohort >= ${day(starts[0]!)}::date and at < ${day(last)}::date
        order by cohort, at`.execute(trx);
      // Spells of the scope that start or end exactly at a past period's end, or after `now` in the current period.
      const exact = ends.slice(0, -1);
      const { rows: fixes } = await sql<{ cohort: string; at_ms: number | null; delta: number }>`
        select period_start(${period}, m.first_started_at)::text as cohort, (extract(epoch from x.at) * 1000)::float8 as at_ms, sum(x.delta)::int as delta from (
          select member_id, started_at as at, 1 as delta from metrics_spells where creator_id = ${scope.creatorId} and scope_id = ${sid} and started_at = any(${exact}::timestamptz[])
          union all
          select member_id, ended_at, -1 from metrics_spells where creator_id = ${scope.creatorId} and scope_id = ${sid} and ended_at = any(${exact}::timestamptz[])
          union all
          select member_id, null, -1 from metrics_spells where creator_id = ${scope.creatorId} and scope_id = ${sid} and started_at > ${now} and started_at < ${last}
          union all
          select member_id, null, 1 from metrics_spells where creator_id = ${scope.creatorId} and scope_id = ${sid} and ended_at > ${now} and ended_at < ${last}
        ) x join metrics_members m on m.creator_id = ${scope.creatorId} and m.scope_id = ${sid} and m.member_id = x.member_id
        where m.first_started_at >= ${starts[0]!}
        group by 1, 2`.execute(trx);
      return { buckets, fixes };
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
