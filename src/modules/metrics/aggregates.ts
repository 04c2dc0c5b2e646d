import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/tx.js';

/** scope_id of "all of the creator's communities" (migrations/0017). */
export const ALL_COMMUNITIES = '00000000-0000-0000-0000-000000000000';
const ALL = sql.lit(ALL_COMMUNITIES);

/**
 * What a set of spells and member states adds to the counters, as CTEs over two relations the
 * caller defines: `sp (sign, scope_id, member_id, started_at, ended_at, last, first)` — spells,
 * each with whether it is the member's last in the scope and when their first began — and
 * `ms (sign, scope_id, trialing, home_tier_id, tier_mrr)` — member states. Signs are +1 (a
 * spell or state that now holds) or −1 (one that no longer does), so the same text computes a
 * member's change (after − before) and a creator's totals from scratch (all +1).
 */
const COUNTER_DELTAS = sql`
  d as (
    select scope_id, day, sum(starts)::int as starts, sum(ends)::int as ends, sum(final_ends)::int as final_ends from (
      select scope_id, (started_at at time zone 'UTC')::date as day, sign as starts, 0 as ends, 0 as final_ends from sp
      union all
      select scope_id, (ended_at at time zone 'UTC')::date, 0, sign, case when last then sign else 0 end from sp where ended_at is not null
    ) x group by scope_id, day
  ),
  c as (
    select scope_id, period, cohort, at, sum(members)::int as members, sum(starts)::int as starts, sum(ends)::int as ends from (
      select sp.scope_id, p.period, period_start(p.period, sp.first) as cohort, period_start(p.period, sp.started_at) as at,
             case when sp.started_at = sp.first then sp.sign else 0 end as members, sp.sign as starts, 0 as ends
      from sp cross join (values ('week'), ('month')) as p(period)
      union all
      select sp.scope_id, p.period, period_start(p.period, sp.first), period_start(p.period, sp.ended_at), 0, 0, sp.sign
      from sp cross join (values ('week'), ('month')) as p(period) where sp.ended_at is not null
    ) x group by scope_id, period, cohort, at
  ),
  sc as (
    select scope_id, sum(case when trialing then sign else 0 end)::int as trialing from ms group by scope_id
  ),
  td as (
    select tier_id, sum(mrr)::bigint as mrr_cents, sum(all_m)::int as members_all, sum(community_m)::int as members_community from (
      select home_tier_id as tier_id, 0 as mrr, case when scope_id = ${ALL} then sign else 0 end as all_m,
             case when scope_id <> ${ALL} then sign else 0 end as community_m
      from ms where home_tier_id is not null
      union all
      select t.key::uuid, sign * t.value::bigint, 0, 0 from ms cross join lateral jsonb_each_text(ms.tier_mrr) as t where ms.tier_mrr is not null
    ) x group by tier_id
  )`;

/**
 * The creator metrics' counters (migrations/0017), kept in the transaction of every
 * subscription change and recomputed from scratch by reconciliation. Both compute from the
 * same views (metrics_spell_source, metrics_member_source) and the same COUNTER_DELTAS.
 */
export function createMetricsAggregates() {
  /**
   * Every change of a creator's counters happens under one row lock (the creator's "all"
   * scope row): a member's before-state is read after it is granted, so two members changing
   * at once never apply a difference computed from a stale before. Webhooks of one creator
   * queue here for the end of their transaction; a creator's changes are a few a second at most.
   */
  async function lockCreator(creatorId: string, trx: Executor) {
    await sql`insert into metrics_scopes as s (creator_id, scope_id) values (${creatorId}, ${ALL})
      on conflict (creator_id, scope_id) do update set trialing = s.trialing`.execute(trx);
  }

  return {
    lockCreator,

    /**
     * Recomputes one member's share of the creator's counters after a change to their
     * subscriptions (in that change's transaction) and applies the difference. Returns how many
     * counter rows moved (0: nothing that counts changed).
     */
    async refresh(creatorId: string, memberId: string, trx: Executor): Promise<number> {
      await lockCreator(creatorId, trx);
      const { rows } = await sql<{ moved: number }>`
        with new_sp as materialized (
          select scope_id, started_at, ended_at from metrics_spell_source where creator_id = ${creatorId} and member_id = ${memberId}
        ),
        old_sp as materialized (
          select scope_id, started_at, ended_at from metrics_spells where creator_id = ${creatorId} and member_id = ${memberId}
        ),
        new_m as materialized (
          select v.scope_id, v.trialing, v.home_tier_id, v.tier_mrr, (select min(n.started_at) from new_sp n where n.scope_id = v.scope_id) as first_started_at
          from metrics_member_source v where v.creator_id = ${creatorId} and v.member_id = ${memberId}
        ),
        old_m as materialized (
          select scope_id, trialing, home_tier_id, tier_mrr, first_started_at from metrics_members where creator_id = ${creatorId} and member_id = ${memberId}
        ),
        sp as (
          select 1 as sign, n.scope_id, n.started_at, n.ended_at, n.started_at = max(n.started_at) over (partition by n.scope_id) as last, m.first_started_at as first
          from new_sp n join new_m m on m.scope_id = n.scope_id
          union all
          select -1, o.scope_id, o.started_at, o.ended_at, o.started_at = max(o.started_at) over (partition by o.scope_id), m.first_started_at
          from old_sp o join old_m m on m.scope_id = o.scope_id
        ),
        ms as (
          select 1 as sign, scope_id, trialing, home_tier_id, tier_mrr from new_m
          union all
          select -1, scope_id, trialing, home_tier_id, tier_mrr from old_m
        ),
        ${COUNTER_DELTAS},
        days_moved as (
          insert into metrics_days as t (creator_id, scope_id, day, starts, ends, final_ends)
          select ${creatorId}, scope_id, day, starts, ends, final_ends from d where (starts, ends, final_ends) <> (0, 0, 0) order by scope_id, day
          on conflict (creator_id, scope_id, day) do update
            set starts = t.starts + excluded.starts, ends = t.ends + excluded.ends, final_ends = t.final_ends + excluded.final_ends
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
          insert into metrics_scopes as t (creator_id, scope_id, trialing)
          select ${creatorId}, scope_id, trialing from sc where trialing <> 0 order by scope_id
          on conflict (creator_id, scope_id) do update set trialing = t.trialing + excluded.trialing
          returning 1
        ),
        tiers_moved as (
          insert into metrics_tiers as t (creator_id, tier_id, mrr_cents, members_all, members_community)
          select ${creatorId}, tier_id, mrr_cents, members_all, members_community from td
          where (mrr_cents, members_all, members_community) <> (0, 0, 0) order by tier_id
          on conflict (creator_id, tier_id) do update
            set mrr_cents = t.mrr_cents + excluded.mrr_cents, members_all = t.members_all + excluded.members_all,
                members_community = t.members_community + excluded.members_community
          returning 1
        ),
        members_written as (
          insert into metrics_members as t (creator_id, scope_id, member_id, trialing, home_tier_id, tier_mrr, first_started_at)
          select ${creatorId}, scope_id, ${memberId}, trialing, home_tier_id, tier_mrr, first_started_at from new_m order by scope_id
          on conflict (creator_id, scope_id, member_id) do update
            set trialing = excluded.trialing, home_tier_id = excluded.home_tier_id, tier_mrr = excluded.tier_mrr, first_started_at = excluded.first_started_at
            where (t.trialing, t.home_tier_id, t.tier_mrr, t.first_started_at) is distinct from
                  (excluded.trialing, excluded.home_tier_id, excluded.tier_mrr, excluded.first_started_at)
        ),
        -- A subscription moved to another community's tier leaves its old scope.
        members_gone as (
          delete from metrics_members t where t.creator_id = ${creatorId} and t.member_id = ${memberId}
            and not exists (select 1 from new_m n where n.scope_id = t.scope_id)
        ),
        -- Upserted and deleted rows are disjoint (by start), so the two never touch one row.
        spells_written as (
          insert into metrics_spells as t (creator_id, scope_id, member_id, started_at, ended_at)
          select ${creatorId}, scope_id, ${memberId}, started_at, ended_at from new_sp n
          where not exists (select 1 from old_sp o where o.scope_id = n.scope_id and o.started_at = n.started_at and o.ended_at is not distinct from n.ended_at)
          order by scope_id, started_at
          on conflict (creator_id, scope_id, member_id, started_at) do update set ended_at = excluded.ended_at
        ),
        spells_gone as (
          delete from metrics_spells t where t.creator_id = ${creatorId} and t.member_id = ${memberId}
            and not exists (select 1 from new_sp n where n.scope_id = t.scope_id and n.started_at = t.started_at)
        )
        select ((select count(*) from days_moved) + (select count(*) from cohorts_moved) + (select count(*) from scopes_moved)
                + (select count(*) from tiers_moved))::int as moved`.execute(trx);
      return rows[0]!.moved;
    },

    /**
     * Recomputes all of a creator's counters, spells and member states from the mirror and
     * fixes every row that differs (reconciliation; after data written around the mirror, as
     * the scale seeders do). Returns the rows it fixed: 0 when the kept counters were right.
     */
    async rebuild(creatorId: string, trx: Executor): Promise<number> {
      await lockCreator(creatorId, trx);
      const fixed = async (q: RawBuilder<{ n: number }>) => (await q.execute(trx)).rows[0]!.n;
      const inserted = (r: { numAffectedRows?: bigint }) => Number(r.numAffectedRows ?? 0);
      let n = 0;
      // Spells and member states, as the views say they are now.
      await sql`create temporary table fresh_spells on commit drop as
        select scope_id, member_id, started_at, ended_at from metrics_spell_source where creator_id = ${creatorId}`.execute(trx);
      await sql`create temporary table fresh_members on commit drop as
        select v.scope_id, v.member_id, v.trialing, v.home_tier_id, v.tier_mrr, f.first_started_at
        from metrics_member_source v
        left join (select scope_id, member_id, min(started_at) as first_started_at from fresh_spells group by scope_id, member_id) f
          on f.scope_id = v.scope_id and f.member_id = v.member_id
        where v.creator_id = ${creatorId}`.execute(trx);
      await sql`analyze fresh_spells`.execute(trx);
      await sql`analyze fresh_members`.execute(trx);
      // A changed row is deleted, then inserted anew by a second statement: the two in one
      // statement would not see each other's work on the same key.
      n += await fixed(sql`with gone as (
          delete from metrics_spells t where t.creator_id = ${creatorId} and not exists (
            select 1 from fresh_spells f where f.scope_id = t.scope_id and f.member_id = t.member_id and f.started_at = t.started_at and f.ended_at is not distinct from t.ended_at)
          returning 1)
        select count(*)::int as n from gone`);
      n += inserted(await sql`insert into metrics_spells (creator_id, scope_id, member_id, started_at, ended_at)
        select ${creatorId}, f.scope_id, f.member_id, f.started_at, f.ended_at from fresh_spells f
        on conflict (creator_id, scope_id, member_id, started_at) do nothing`.execute(trx));
      n += await fixed(sql`with gone as (
          delete from metrics_members t where t.creator_id = ${creatorId} and not exists (
            select 1 from fresh_members f where f.scope_id = t.scope_id and f.member_id = t.member_id
              and (f.trialing, f.home_tier_id, f.tier_mrr, f.first_started_at) is not distinct from (t.trialing, t.home_tier_id, t.tier_mrr, t.first_started_at))
          returning 1)
        select count(*)::int as n from gone`);
      n += inserted(await sql`insert into metrics_members (creator_id, scope_id, member_id, trialing, home_tier_id, tier_mrr, first_started_at)
        select ${creatorId}, f.scope_id, f.member_id, f.trialing, f.home_tier_id, f.tier_mrr, f.first_started_at from fresh_members f
        on conflict (creator_id, scope_id, member_id) do nothing`.execute(trx));
      // The counters the fresh spells and states add up to, against the kept ones.
      await sql`create temporary table fresh_counters on commit drop as
        with sp as (
          select 1 as sign, s.scope_id, s.member_id, s.started_at, s.ended_at,
                 s.started_at = max(s.started_at) over (partition by s.scope_id, s.member_id) as last, m.first_started_at as first
          from fresh_spells s join fresh_members m on m.scope_id = s.scope_id and m.member_id = s.member_id
        ),
        ms as (select 1 as sign, scope_id, trialing, home_tier_id, tier_mrr from fresh_members),
        ${COUNTER_DELTAS}
        select 'days' as kind, scope_id, day as k1, null::text as k2, null::date as k3, starts as v1, ends as v2, final_ends::bigint as v3 from d
        union all select 'cohorts', scope_id, cohort, period, at, members, starts, ends from c
        union all select 'scopes', scope_id, null, null, null, trialing, 0, 0 from sc
        union all select 'tiers', tier_id, null, null, null, members_all, members_community, mrr_cents from td`.execute(trx);
      n += await fixed(sql`with kept as (
          select 'days' as kind, scope_id, day as k1, null::text as k2, null::date as k3, starts as v1, ends as v2, final_ends::bigint as v3
          from metrics_days where creator_id = ${creatorId}
          union all select 'cohorts', scope_id, cohort, period, at, members, starts, ends from metrics_cohorts where creator_id = ${creatorId}
          union all select 'scopes', scope_id, null, null, null, trialing, 0, 0 from metrics_scopes where creator_id = ${creatorId}
          union all select 'tiers', tier_id, null, null, null, members_all, members_community, mrr_cents from metrics_tiers where creator_id = ${creatorId}
        ),
        diff as (
          select coalesce(f.kind, k.kind) as kind from fresh_counters f full join kept k
            on k.kind = f.kind and k.scope_id = f.scope_id and k.k1 is not distinct from f.k1 and k.k2 is not distinct from f.k2 and k.k3 is not distinct from f.k3
          where (coalesce(f.v1, 0), coalesce(f.v2, 0), coalesce(f.v3, 0)) <> (coalesce(k.v1, 0), coalesce(k.v2, 0), coalesce(k.v3, 0))
        )
        select count(*)::int as n from diff`);
      // Replaced wholesale: cheaper than patching, and the lock keeps every writer out meanwhile.
      await sql`delete from metrics_days where creator_id = ${creatorId}`.execute(trx);
      await sql`insert into metrics_days (creator_id, scope_id, day, starts, ends, final_ends)
        select ${creatorId}, scope_id, k1, v1, v2, v3 from fresh_counters where kind = 'days' and (v1, v2, v3) <> (0, 0, 0)`.execute(trx);
      await sql`delete from metrics_cohorts where creator_id = ${creatorId}`.execute(trx);
      await sql`insert into metrics_cohorts (creator_id, scope_id, period, cohort, at, members, starts, ends)
        select ${creatorId}, scope_id, k2, k1, k3, v1, v2, v3 from fresh_counters where kind = 'cohorts' and (v1, v2, v3) <> (0, 0, 0)`.execute(trx);
      await sql`update metrics_scopes set trialing = 0 where creator_id = ${creatorId}`.execute(trx);
      await sql`insert into metrics_scopes as t (creator_id, scope_id, trialing)
        select ${creatorId}, scope_id, v1 from fresh_counters where kind = 'scopes'
        on conflict (creator_id, scope_id) do update set trialing = excluded.trialing`.execute(trx);
      await sql`delete from metrics_tiers where creator_id = ${creatorId}`.execute(trx);
      await sql`insert into metrics_tiers (creator_id, tier_id, mrr_cents, members_all, members_community)
        select ${creatorId}, scope_id, v3, v1, v2 from fresh_counters where kind = 'tiers' and (v1, v2, v3) <> (0, 0, 0)`.execute(trx);
      await sql`drop table fresh_counters, fresh_members, fresh_spells`.execute(trx);
      return n;
    },
  };
}

export type MetricsAggregates = ReturnType<typeof createMetricsAggregates>;
