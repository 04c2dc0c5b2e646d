-- Creator metrics kept current (issue #15): the dashboard at a million subscriptions reads a
-- few counter rows instead of scanning the mirror. What the counters hold is defined once, by
-- the views below; the subscription mirror recomputes one member's share from them in the
-- transaction that changes a subscription (metrics/aggregates.ts), and reconciliation
-- recomputes a whole creator's and fixes any difference.
--
-- A scope is one community, or all of a creator's communities: scope_id is the community's id,
-- or the nil uuid for "all" (a member of two communities is one member creator-wide).

-- The UTC period holding t: 'week' (from Monday) or 'month'.
create function period_start(period text, t timestamptz) returns date
language sql immutable strict parallel safe
as $$ select date_trunc(period, t at time zone 'UTC')::date $$;

-- A subscription is live over [created_at, end): end is ended_at (else canceled_at, else the
-- time the mirror saw it canceled) once canceled, open otherwise. One that ended the instant
-- it began (or before) was never live. A member's *spell* in a scope is a maximal stretch of
-- time during which they held a live subscription there: overlapping or touching intervals
-- merge. Spells are what churn, growth and retention count.
create view metrics_spell_source as
with iv as (
  select s.creator_id, x.scope_id, s.member_id, s.created_at as a,
         case when s.status = 'canceled' then coalesce(s.ended_at, s.canceled_at, s.updated_at) end as b
  from subscriptions s
  cross join lateral (values (s.community_id), ('00000000-0000-0000-0000-000000000000'::uuid)) as x(scope_id)
),
flagged as (
  -- A new spell starts where an interval begins after every earlier one ended.
  select creator_id, scope_id, member_id, a, b,
         coalesce(a > max(coalesce(b, 'infinity'::timestamptz)) over (partition by creator_id, scope_id, member_id order by a, b nulls last
                                                                     rows between unbounded preceding and 1 preceding), true) as opens
  from iv where b is null or b > a
),
numbered as (
  select creator_id, scope_id, member_id, a, b,
         sum(opens::int) over (partition by creator_id, scope_id, member_id order by a, b nulls last rows unbounded preceding) as n
  from flagged
)
select creator_id, scope_id, member_id, min(a) as started_at, case when bool_or(b is null) then null else max(b) end as ended_at,
       n = max(n) over (partition by creator_id, scope_id, member_id) as last
from numbered group by creator_id, scope_id, member_id, n;

-- A member in a scope, from their subscriptions there: paying (DESIGN §7: active, cancel at
-- period end included, or past_due), trialing (a trial and nothing paying), the tier they count
-- on in the tier mix (their highest monthly-normalised paying subscription, the latest on a
-- tie) and, per community, the monthly-normalised cents each tier gets from them (MRR).
create view metrics_member_source as
select s.creator_id, x.scope_id, s.member_id,
       bool_or(s.status = 'trialing') and not bool_or(s.status in ('active', 'past_due')) as trialing,
       (array_agg(s.tier_id order by monthly_cents(s.price_cents, s.billing_period) desc, s.created_at desc, s.id desc)
          filter (where s.status in ('active', 'past_due')))[1] as home_tier_id,
       case when x.scope_id <> '00000000-0000-0000-0000-000000000000'::uuid then
         coalesce((select jsonb_object_agg(t.tier_id, t.cents) from (
           select p.tier_id, sum(monthly_cents(p.price_cents, p.billing_period)) as cents from subscriptions p
           where p.creator_id = s.creator_id and p.member_id = s.member_id and p.community_id = x.scope_id and p.status in ('active', 'past_due')
           group by p.tier_id) t), '{}'::jsonb)
       end as tier_mrr
from subscriptions s
cross join lateral (values (s.community_id), ('00000000-0000-0000-0000-000000000000'::uuid)) as x(scope_id)
group by s.creator_id, x.scope_id, s.member_id;

-- The stored spells and member states: what the counters below were last computed from, so a
-- change is applied as the difference between before and after.
create table metrics_spells (
  creator_id uuid not null,
  scope_id uuid not null,
  member_id uuid not null,
  started_at timestamptz not null,
  ended_at timestamptz,
  -- The member's latest spell in the scope (ended: they are not live there now).
  last boolean not null,
  primary key (creator_id, scope_id, member_id, started_at)
);
-- The partial days at the edges of a window are counted from the spells themselves, index only.
create index metrics_spells_started_idx on metrics_spells (creator_id, scope_id, started_at);
create index metrics_spells_ended_idx on metrics_spells (creator_id, scope_id, ended_at) include (last) where ended_at is not null;

create table metrics_members (
  creator_id uuid not null,
  scope_id uuid not null,
  member_id uuid not null,
  trialing boolean not null,
  home_tier_id uuid,
  tier_mrr jsonb,
  -- The start of their first spell: their cohort. Null: never live.
  first_started_at timestamptz,
  -- The UTC day of their last activity (creator_members.last_active_at) as last folded into
  -- metrics_days.active: by the mirror for this member, and by a job for everyone who was
  -- active since its previous run. Null: never active.
  active_day date,
  primary key (creator_id, scope_id, member_id)
);

-- Per scope: members trialing (paying members and MRR are the sums of metrics_tiers). The
-- "all" row is also the creator's lock for every change of these counters, and says when
-- activity was last folded into them (members active since then are counted from
-- creator_members directly).
create table metrics_scopes (
  creator_id uuid not null,
  scope_id uuid not null,
  trialing int not null default 0,
  activity_folded_at timestamptz,
  primary key (creator_id, scope_id)
);

-- Per tier: its MRR, and its paying members creator-wide and within its community (a member
-- paying in two communities counts on one tier creator-wide, on one per community).
create table metrics_tiers (
  creator_id uuid not null,
  tier_id uuid not null,
  mrr_cents bigint not null default 0,
  members_all int not null default 0,
  members_community int not null default 0,
  primary key (creator_id, tier_id)
);

-- Per scope and UTC day: spells that started, that ended, and that ended as the member's
-- last (they are not live now), and live members whose last activity (as folded) fell on it.
-- A 30-day window sums 30 of these and counts its partial day from metrics_spells and
-- creator_members.
create table metrics_days (
  creator_id uuid not null,
  scope_id uuid not null,
  day date not null,
  starts int not null default 0,
  ends int not null default 0,
  final_ends int not null default 0,
  active int not null default 0,
  primary key (creator_id, scope_id, day)
);

-- Retention cohorts, per scope, period kind ('week' from Monday, 'month') and cohort (the
-- period of the first spell's start): how many members it has, and per later period `at`
-- the spells of its members that started and that ended in it. Members live at a period's
-- end = the sum of starts − ends over the periods up to it (spells of a member never overlap).
create table metrics_cohorts (
  creator_id uuid not null,
  scope_id uuid not null,
  period text not null check (period in ('week', 'month')),
  cohort date not null,
  at date not null,
  members int not null default 0,
  starts int not null default 0,
  ends int not null default 0,
  primary key (creator_id, scope_id, period, cohort, at)
);

-- Money per community and UTC month: charges by the month they were paid, refunds by the month
-- they were made (failed and canceled ones aside). Kept by the triggers below on every write
-- to payments and refunds, whoever makes it (webhooks, reconciliation, the refund route).
create table metrics_revenue (
  creator_id uuid not null,
  community_id uuid not null,
  month date not null,
  charged_cents bigint not null default 0,
  refunded_cents bigint not null default 0,
  primary key (creator_id, community_id, month)
);

-- Adds (or with negative amounts takes back) money per community and month, in key order.
create function metrics_revenue_add(creators uuid[], communities uuid[], months date[], charged bigint[], refunded bigint[]) returns void
language sql
as $$
  insert into metrics_revenue as r (creator_id, community_id, month, charged_cents, refunded_cents)
  select * from unnest(creators, communities, months, charged, refunded) as x(creator_id, community_id, month, charged, refunded)
  order by 1, 2, 3
  on conflict (creator_id, community_id, month) do update
    set charged_cents = r.charged_cents + excluded.charged_cents, refunded_cents = r.refunded_cents + excluded.refunded_cents
$$;

-- Statement-level, with transition tables: a bulk insert costs one aggregate, not a row update
-- each. A payment counts for its subscription's community, in the month it was paid.
create function metrics_payments_changed() returns trigger
language plpgsql
as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform metrics_revenue_add(array_agg(creator_id), array_agg(community_id), array_agg(month), array_agg(-cents), array_agg(0::bigint))
    from (select p.creator_id, s.community_id, period_start('month', p.paid_at) as month, sum(p.amount_cents)::bigint as cents
          from old_rows p join subscriptions s on s.id = p.subscription_id group by 1, 2, 3) g;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform metrics_revenue_add(array_agg(creator_id), array_agg(community_id), array_agg(month), array_agg(cents), array_agg(0::bigint))
    from (select p.creator_id, s.community_id, period_start('month', p.paid_at) as month, sum(p.amount_cents)::bigint as cents
          from new_rows p join subscriptions s on s.id = p.subscription_id group by 1, 2, 3) g;
  end if;
  return null;
end $$;

-- A refund counts in the month it was made, unless it failed or was canceled.
create function metrics_refunds_changed() returns trigger
language plpgsql
as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform metrics_revenue_add(array_agg(creator_id), array_agg(community_id), array_agg(month), array_agg(0::bigint), array_agg(-cents))
    from (select r.creator_id, s.community_id, period_start('month', r.created_at) as month, sum(r.amount_cents)::bigint as cents
          from old_rows r join subscriptions s on s.id = r.subscription_id where r.status not in ('failed', 'canceled') group by 1, 2, 3) g;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform metrics_revenue_add(array_agg(creator_id), array_agg(community_id), array_agg(month), array_agg(0::bigint), array_agg(cents))
    from (select r.creator_id, s.community_id, period_start('month', r.created_at) as month, sum(r.amount_cents)::bigint as cents
          from new_rows r join subscriptions s on s.id = r.subscription_id where r.status not in ('failed', 'canceled') group by 1, 2, 3) g;
  end if;
  return null;
end $$;

create trigger metrics_payments_insert after insert on payments referencing new table as new_rows
  for each statement execute function metrics_payments_changed();
create trigger metrics_payments_update after update on payments referencing old table as old_rows new table as new_rows
  for each statement execute function metrics_payments_changed();
create trigger metrics_payments_delete after delete on payments referencing old table as old_rows
  for each statement execute function metrics_payments_changed();
create trigger metrics_refunds_insert after insert on refunds referencing new table as new_rows
  for each statement execute function metrics_refunds_changed();
create trigger metrics_refunds_update after update on refunds referencing old table as old_rows new table as new_rows
  for each statement execute function metrics_refunds_changed();
create trigger metrics_refunds_delete after delete on refunds referencing old table as old_rows
  for each statement execute function metrics_refunds_changed();

-- The money already mirrored.
insert into metrics_revenue (creator_id, community_id, month, charged_cents, refunded_cents)
select creator_id, community_id, month, sum(charged), sum(refunded) from (
  select p.creator_id, s.community_id, period_start('month', p.paid_at) as month, p.amount_cents as charged, 0 as refunded
  from payments p join subscriptions s on s.id = p.subscription_id
  union all
  select r.creator_id, s.community_id, period_start('month', r.created_at), 0, r.amount_cents
  from refunds r join subscriptions s on s.id = r.subscription_id where r.status not in ('failed', 'canceled')
) x group by 1, 2, 3;
