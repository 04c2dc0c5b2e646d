-- The figures on community and tier records (members_count, active_subscribers, mrr_cents)
-- read from the creator metrics' counters (issue #16): a GET of one community used to
-- aggregate every subscription it holds (6.7 ms of PostgreSQL at 10,000 members, a full
-- scan of the community's subscriptions at a million). Members and MRR were already counted
-- per tier (metrics_tiers); what was missing is the number of subscriptions in status `active`
-- per tier, counted here the way tier_mrr counts cents: per member and community in
-- metrics_members (the before-state a change is diffed against), summed per tier. And so that a
-- community reads one counter row, as a tier does, each scope row now also holds its sums:
-- paying members, MRR and active subscriptions (the last two on community rows only; the
-- "all" row keeps 0 there, as tier_mrr is per community).

-- The view gains one column at its end (create or replace keeps the others as they are): per
-- community, the member's subscriptions in status `active` by tier.
create or replace view metrics_member_source as
select s.creator_id, x.scope_id, s.member_id,
       bool_or(s.status = 'trialing') and not bool_or(s.status in ('active', 'past_due')) as trialing,
       (array_agg(s.tier_id order by monthly_cents(s.price_cents, s.billing_period) desc, s.created_at desc, s.id desc)
          filter (where s.status in ('active', 'past_due')))[1] as home_tier_id,
       case when x.scope_id <> '00000000-0000-0000-0000-000000000000'::uuid then
         coalesce((select jsonb_object_agg(t.tier_id, t.cents) from (
           select p.tier_id, sum(monthly_cents(p.price_cents, p.billing_period)) as cents from subscriptions p
           where p.creator_id = s.creator_id and p.member_id = s.member_id and p.community_id = x.scope_id and p.status in ('active', 'past_due')
           group by p.tier_id) t), '{}'::jsonb)
       end as tier_mrr,
       case when x.scope_id <> '00000000-0000-0000-0000-000000000000'::uuid then
         coalesce((select jsonb_object_agg(t.tier_id, t.n) from (
           select p.tier_id, count(*) as n from subscriptions p
           where p.creator_id = s.creator_id and p.member_id = s.member_id and p.community_id = x.scope_id and p.status = 'active'
           group by p.tier_id) t), '{}'::jsonb)
       end as tier_active
from subscriptions s
cross join lateral (values (s.community_id), ('00000000-0000-0000-0000-000000000000'::uuid)) as x(scope_id)
group by s.creator_id, x.scope_id, s.member_id;

alter table metrics_members add column tier_active jsonb;
alter table metrics_tiers add column active_subscriptions int not null default 0;
alter table metrics_scopes add column paying int not null default 0,
  add column mrr_cents bigint not null default 0,
  add column active_subscriptions int not null default 0;

-- Creators whose counters exist get the new ones now; the others get all of theirs at their
-- first change or the start-up task (metrics/aggregates.ts buildMissing), as before.
update metrics_members m set tier_active = v.tier_active
from metrics_member_source v
where v.creator_id = m.creator_id and v.scope_id = m.scope_id and v.member_id = m.member_id
  and m.scope_id <> '00000000-0000-0000-0000-000000000000'::uuid;

insert into metrics_tiers as t (creator_id, tier_id, active_subscriptions)
select s.creator_id, s.tier_id, count(*)::int from subscriptions s
where s.status = 'active'
  and exists (select 1 from metrics_scopes m where m.creator_id = s.creator_id and m.scope_id = '00000000-0000-0000-0000-000000000000'::uuid)
group by s.creator_id, s.tier_id
on conflict (creator_id, tier_id) do update set active_subscriptions = excluded.active_subscriptions;

-- The scope sums, from the member states just completed (what the counters were computed from).
update metrics_scopes sc set paying = x.paying, mrr_cents = x.mrr_cents, active_subscriptions = x.active
from (
  select m.creator_id, m.scope_id, count(*) filter (where m.home_tier_id is not null)::int as paying,
         coalesce(sum((select sum(value::bigint) from jsonb_each_text(m.tier_mrr))), 0)::bigint as mrr_cents,
         coalesce(sum((select sum(value::int) from jsonb_each_text(m.tier_active))), 0)::int as active
  from metrics_members m group by m.creator_id, m.scope_id
) x
where x.creator_id = sc.creator_id and x.scope_id = sc.scope_id;
