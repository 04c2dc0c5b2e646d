-- Access only while paying (issue #26, item 2). The processor's statuses `incomplete` (the
-- first payment has not succeeded), `incomplete_expired` (it never did), `unpaid` (renewal
-- retries exhausted, the subscription kept open) and `paused` (a trial ended without a payment
-- method) used to be mirrored as past_due or canceled; they are now stored as they are, and
-- none of them is live: no paywall, no programs, no challenges, not paying, not MRR. Live stays
-- trialing, active (cancel at period end included, until it ends) and past_due (in dunning).
--
-- No stored row holds a new status yet: the mirror wrote them as past_due or canceled. The
-- next reconciliation re-reads every subscription from the processor (status=all) and the
-- mirror's refresh of a row whose status now maps differently moves the directory and the
-- counters with it, as any change does.

alter table subscriptions drop constraint subscriptions_status_check;
alter table subscriptions add constraint subscriptions_status_check
  check (status in ('trialing', 'active', 'past_due', 'canceled', 'incomplete', 'incomplete_expired', 'unpaid', 'paused'));

-- The one SQL definition of live (the TypeScript one is LIVE_STATUSES in
-- subscriptions/status.ts; a test holds the two equal). Paying (MRR, active_subscribers) is
-- the live statuses less trialing.
create function subscription_live(status text) returns boolean
language sql immutable strict parallel safe
as $$ select status in ('trialing', 'active', 'past_due') $$;

-- When the mirror first saw the subscription in a not-live status other than canceled (the
-- service's clock, as the canceled fallback updated_at is; a subscription first seen that way
-- never was live: its created_at). Null while live. Kept when it is canceled afterwards, so the
-- member's spell ends when access did, not at the later cancellation.
alter table subscriptions add column lapsed_at timestamptz;

-- Spells (migrations/0017): a subscription is live over [created_at, end), end being its
-- lapse or its end, whichever came first.
create or replace view metrics_spell_source as
with iv as (
  select s.creator_id, x.scope_id, s.member_id, s.created_at as a,
         case when s.status = 'canceled' then least(coalesce(s.ended_at, s.canceled_at, s.updated_at), s.lapsed_at)
              when not subscription_live(s.status) then coalesce(s.lapsed_at, s.updated_at) end as b
  from subscriptions s
  cross join lateral (values (s.community_id), ('00000000-0000-0000-0000-000000000000'::uuid)) as x(scope_id)
),
flagged as (
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

-- Member status (migrations/0013): a member whose subscriptions are none of them live is
-- churned, whatever the not-live statuses are; the subscription that counts is a live one
-- (the latest if several), else the latest of the others — so the directory's tier and status
-- show an `unpaid` one as unpaid.
create or replace view community_membership_source as
select s.creator_id, s.community_id, s.member_id,
       min(s.created_at) as joined_at,
       membership_state(bool_or(subscription_live(s.status)), bool_or(s.status = 'trialing'), bool_or(s.status = 'active'),
                        bool_or(s.status = 'past_due' or (s.status = 'active' and s.cancel_at_period_end))) as state,
       (array_agg(s.id order by subscription_live(s.status) desc, s.created_at desc, s.id desc))[1] as subscription_id,
       (array_agg(s.tier_id order by subscription_live(s.status) desc, s.created_at desc, s.id desc))[1] as tier_id
from subscriptions s
group by s.creator_id, s.community_id, s.member_id;

create or replace view creator_membership_source as
select s.creator_id, s.member_id,
       min(s.created_at) as joined_at,
       max(s.created_at) as last_joined_at,
       membership_state(bool_or(subscription_live(s.status)), bool_or(s.status = 'trialing'), bool_or(s.status = 'active'),
                        bool_or(s.status = 'past_due' or (s.status = 'active' and s.cancel_at_period_end))) as state,
       fold(min(m.name)) as name_key,
       fold(min(m.name)) || E'\n' || fold(min(m.email)) as search
from subscriptions s join members m on m.id = s.member_id
group by s.creator_id, s.member_id;

-- A participant whose subscription stopped qualifying for the challenge (ended, not live, or a
-- tier below its minimum) stops scoring from this moment (the service's clock, as the logs'
-- created_at): logs written from then on do not count. Null: scoring. Set and cleared by the
-- subscription mirror (challenges/qualification.ts).
alter table challenge_participants add column scoring_stopped_at timestamptz;
