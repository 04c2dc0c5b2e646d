import { sql, type Kysely } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { Database } from '../../db/types.js';
import { ALL, ALL_COMMUNITIES, COUNTER_DELTAS, foldActivity, lockCreator } from './counters.js';
import { check, rebuild } from './rebuild.js';

export { ALL_COMMUNITIES };


/**
 * The creator metrics' counters (migrations/0017), kept in the transaction of every
 * subscription change, folded with activity by a job, and recomputed from scratch by
 * reconciliation (rebuild.ts). All compute from the same views (metrics_spell_source,
 * metrics_member_source) and the same COUNTER_DELTAS (counters.ts).
 */
export function createMetricsAggregates({ now = () => new Date() }: { now?: () => Date } = {}) {
  /**
   * Moves the members active since the creator's last fold (less the margin) to the day of
   * their latest activity in metrics_days.active, under the counters lock. Activity writes
   * (the hot logging path among them) never touch the counters; reads count the members
   * active since the fold from creator_members instead (metrics.repo.ts engaged).
   */
  async function fold(creatorId: string, trx: Executor): Promise<number> {
    const foldedAt = now();
    if ((await lockCreator(creatorId, trx)).created) return rebuild(creatorId, trx, { locked: true, now });
    return foldActivity(creatorId, foldedAt, trx);
  }

  return {
    /** All of a creator's counters from scratch (rebuild.ts), on this clock. */
    rebuild: (creatorId: string, trx: Executor) => rebuild(creatorId, trx, { now }),
    fold,

    /**
     * Reconciliation's part: a lock-free check of the creator's kept rows against a
     * recomputation (the creator's subscription changes go on meanwhile), and only when it finds
     * a difference, a rebuild under the lock. Answers the rows that differed.
     */
    async reconcile(creatorId: string, db: Kysely<Database>): Promise<number> {
      const drift = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute((trx) => check(creatorId, trx));
      return drift === 0 ? 0 : db.transaction().execute((trx) => rebuild(creatorId, trx, { now }));
    },

    /**
     * Computes the counters of every creator who has subscriptions but none yet (the first start
     * after the counters were introduced; a creator's first change does it too). Answers how many.
     */
    async buildMissing(db: Kysely<Database>): Promise<number> {
      const { rows } = await sql<{ creator_id: string }>`select distinct s.creator_id from subscriptions s
        where not exists (select 1 from metrics_scopes m where m.creator_id = s.creator_id and m.scope_id = ${ALL})`.execute(db);
      for (const { creator_id } of rows) await db.transaction().execute((trx) => rebuild(creator_id, trx, { now }));
      return rows.length;
    },

    /** Folds every creator's recent activity, a transaction each; answers the member rows moved. */
    async foldAll(db: Kysely<Database>): Promise<number> {
      const creators = await sql<{ creator_id: string }>`select creator_id from metrics_scopes where scope_id = ${ALL} order by creator_id`.execute(db);
      let moved = 0;
      for (const { creator_id } of creators.rows) moved += await db.transaction().execute((trx) => fold(creator_id, trx));
      return moved;
    },

    /**
     * Recomputes one member's share of the creator's counters after a change to their
     * subscriptions (in that change's transaction) and applies the difference. Returns how many
     * counter rows moved (0: nothing that counts changed).
     */
    async refresh(creatorId: string, memberId: string, trx: Executor): Promise<number> {
      // A creator without counters (new, or from before they existed) gets all of them computed.
      if ((await lockCreator(creatorId, trx)).created) return rebuild(creatorId, trx, { locked: true, now });
      const { rows } = await sql<{ moved: number }>`
        with new_sp as materialized (
          select scope_id, started_at, ended_at, last from metrics_spell_source where creator_id = ${creatorId} and member_id = ${memberId}
        ),
        old_sp as materialized (
          select scope_id, started_at, ended_at, last from metrics_spells where creator_id = ${creatorId} and member_id = ${memberId}
        ),
        -- Read after the mirror locked the member's directory and activity rows: activity cannot move meanwhile.
        active as materialized (
          select (last_active_at at time zone 'UTC')::date as day from member_activity where creator_id = ${creatorId} and member_id = ${memberId}
        ),
        new_m as materialized (
          select v.scope_id, v.trialing, v.home_tier_id, v.tier_mrr, v.tier_active, (select min(n.started_at) from new_sp n where n.scope_id = v.scope_id) as first_started_at,
                 (select day from active) as active_day
          from metrics_member_source v where v.creator_id = ${creatorId} and v.member_id = ${memberId}
        ),
        old_m as materialized (
          select scope_id, trialing, home_tier_id, tier_mrr, tier_active, first_started_at, active_day from metrics_members where creator_id = ${creatorId} and member_id = ${memberId}
        ),
        sp as (
          select 1 as sign, n.scope_id, n.started_at, n.ended_at, n.last, m.first_started_at as first
          from new_sp n join new_m m on m.scope_id = n.scope_id
          union all
          select -1, o.scope_id, o.started_at, o.ended_at, o.last, m.first_started_at
          from old_sp o join old_m m on m.scope_id = o.scope_id
        ),
        ms as (
          select 1 as sign, scope_id, trialing, home_tier_id, tier_mrr, tier_active, active_day from new_m
          union all
          select -1, scope_id, trialing, home_tier_id, tier_mrr, tier_active, active_day from old_m
        ),
        ${COUNTER_DELTAS},
        days_moved as (
          insert into metrics_days as t (creator_id, scope_id, day, starts, ends, final_ends, active)
          select ${creatorId}, scope_id, day, starts, ends, final_ends, active from d where (starts, ends, final_ends, active) <> (0, 0, 0, 0) order by scope_id, day
          on conflict (creator_id, scope_id, day) do update
            set starts = t.starts + excluded.starts, ends = t.ends + excluded.ends, final_ends = t.final_ends + excluded.final_ends, active = t.active + excluded.active
          returning 1
        ),
        cohorts_moved as (
          insert into metrics_cohorts as t (creator_id, scope_id, period, cohort, at, members, starts, ends)
          select ${creatorId}, scope_id, period, cohort, at, members, starts, ends from c where (members, starts, ends) <> (0, 0, 0)
          order by scope_id, period, cohort, at
          on conflict (creator_id, scope_id, period, cohort, at) do update
            set members = t.members + excluded.members, starts = t.starts + excluded.starts, ends = t.ends + excluded.ends
          returning 1
        ),
        scopes_moved as (
          insert into metrics_scopes as t (creator_id, scope_id, trialing, paying, mrr_cents, active_subscriptions)
          select ${creatorId}, scope_id, trialing, paying, mrr_cents, active_subscriptions from sc
          where (trialing, paying, mrr_cents, active_subscriptions) <> (0, 0, 0, 0) order by scope_id
          on conflict (creator_id, scope_id) do update
            set trialing = t.trialing + excluded.trialing, paying = t.paying + excluded.paying,
                mrr_cents = t.mrr_cents + excluded.mrr_cents, active_subscriptions = t.active_subscriptions + excluded.active_subscriptions
          returning 1
        ),
        tiers_moved as (
          insert into metrics_tiers as t (creator_id, tier_id, mrr_cents, members_all, members_community, active_subscriptions)
          select ${creatorId}, tier_id, mrr_cents, members_all, members_community, active_subscriptions from td
          where (mrr_cents, members_all, members_community, active_subscriptions) <> (0, 0, 0, 0) order by tier_id
          on conflict (creator_id, tier_id) do update
            set mrr_cents = t.mrr_cents + excluded.mrr_cents, members_all = t.members_all + excluded.members_all,
                members_community = t.members_community + excluded.members_community,
                active_subscriptions = t.active_subscriptions + excluded.active_subscriptions
          returning 1
        ),
        members_written as (
          insert into metrics_members as t (creator_id, scope_id, member_id, trialing, home_tier_id, tier_mrr, tier_active, first_started_at, active_day)
          select ${creatorId}, scope_id, ${memberId}, trialing, home_tier_id, tier_mrr, tier_active, first_started_at, active_day from new_m order by scope_id
          on conflict (creator_id, scope_id, member_id) do update
            set trialing = excluded.trialing, home_tier_id = excluded.home_tier_id, tier_mrr = excluded.tier_mrr, tier_active = excluded.tier_active,
                first_started_at = excluded.first_started_at, active_day = excluded.active_day
            where (t.trialing, t.home_tier_id, t.tier_mrr, t.tier_active, t.first_started_at, t.active_day) is distinct from
                  (excluded.trialing, excluded.home_tier_id, excluded.tier_mrr, excluded.tier_active, excluded.first_started_at, excluded.active_day)
        ),
        -- A subscription moved to another community's tier leaves its old scope.
        members_gone as (
          delete from metrics_members t where t.creator_id = ${creatorId} and t.member_id = ${memberId}
            and not exists (select 1 from new_m n where n.scope_id = t.scope_id)
        ),
        -- Upserted and deleted rows are disjoint (by start), so the two never touch one row.
        spells_written as (
          insert into metrics_spells as t (creator_id, scope_id, member_id, started_at, ended_at, last)
          select ${creatorId}, scope_id, ${memberId}, started_at, ended_at, last from new_sp n
          where not exists (select 1 from old_sp o where o.scope_id = n.scope_id and o.started_at = n.started_at
                              and o.ended_at is not distinct from n.ended_at and o.last = n.last)
          order by scope_id, started_at
          on conflict (creator_id, scope_id, member_id, started_at) do update set ended_at = excluded.ended_at, last = excluded.last
        ),
        spells_gone as (
          delete from metrics_spells t where t.creator_id = ${creatorId} and t.member_id = ${memberId}
            and not exists (select 1 from new_sp n where n.scope_id = t.scope_id and n.started_at = t.started_at)
        )
        select ((select count(*) from days_moved) + (select count(*) from cohorts_moved) + (select count(*) from scopes_moved)
                + (select count(*) from tiers_moved))::int as moved`.execute(trx);
      return rows[0]!.moved;
    },

  };
}

export type MetricsAggregates = ReturnType<typeof createMetricsAggregates>;
