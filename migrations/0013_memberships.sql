-- The creator's member directory (issue #12): a read model of who is a member of whom,
-- kept beside the subscription mirror so the list a creator works from every day reads one
-- narrow row per member, in index order, at a million members. The subscriptions stay the
-- source of truth: the views below say how a membership follows from them, the mirror
-- (subscriptions/sync.ts) refreshes a member's rows from those views in the transaction
-- that changes a subscription, and this migration fills them from the same views.

-- Case- and accent-folded text for search and name order: "João" and "JOAO" both read
-- "joao". translate() rather than the unaccent extension: immutable (usable in stored
-- columns and indexes) and independent of the database's locale and extensions; it covers
-- Latin-1, Latin Extended-A, -B and Additional (Vietnamese), and drops combining accents (a name
-- stored decomposed, NFD). lower() afterwards catches plain ASCII capitals.
create function fold(t text) returns text
language sql immutable strict parallel safe
as $$
  select lower(replace(replace(replace(replace(replace(replace(translate(t,
    'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀềỂểỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰựỲỳỴỵỶỷỸỹØøĐđŁłĦħıŦŧÐðÞþ̴̵̶̷̸̡̢̧̨̛̖̗̘̙̜̝̞̟̠̣̤̥̦̩̪̫̬̭̮̯̰̱̲̳̹̺̻̼͇͈͉͍͎̀́̂̃̄̅̆̇̈̉̊̋̌̍̎̏̐̑̒̓̔̽̾̿̀́͂̓̈́͆͊͋͌̕̚ͅ͏͓͔͕͖͙͚͐͑͒͗͛ͣͤͥͦͧͨͩͪͫͬͭͮͯ͘͜͟͢͝͞͠͡',
    'aaaaaaceeeeiiiinooooouuuuyaaaaaaceeeeiiiinooooouuuuyyaaaaaaccccccccddeeeeeeeeeegggggggghhiiiiiiiiijjkkllllllnnnnnnoooooorrrrrrssssssssttttuuuuuuuuuuuuwwyyyzzzzzzoouuaaiioouuuuuuuuuuaaaaggkkoooojggnnaaaaaaeeeeiiiioooorrrruuuusstthhaaeeooooooooyyaabbbbbbccddddddddddeeeeeeeeeeffgghhhhhhhhhhiiiikkkkkkllllllllmmmmmmnnnnnnnnoooooooopppprrrrrrrrssssssssssttttttttuuuuuuuuuuvvvvwwwwwwwwwwxxxxyyzzzzzzhtwyaaaaaaaaaaaaaaaaaaaaaaaaeeeeeeeeeeeeeeeeiiiioooooooooooooooooooooooouuuuuuuuuuuuuuyyyyyyyyooddllhhittddtt'),
    'ß', 'ss'), 'ẞ', 'ss'), 'Æ', 'ae'), 'æ', 'ae'), 'Œ', 'oe'), 'œ', 'oe'))
$$;

-- DESIGN §7 member status from a set of subscriptions, the first rule that holds winning:
-- churned = none live; trial = a trialing one and no active one; at_risk = a past_due one
-- or an active one set to cancel at period end; active = the rest. The third at_risk rule
-- (no activity for 14 days) depends on the clock, so readers apply it to 'active' rows.
create function membership_state(any_live boolean, any_trialing boolean, any_active boolean, any_risk boolean) returns text
language sql immutable strict parallel safe
as $$
  select case when not any_live then 'churned'
              when any_trialing and not any_active then 'trial'
              when any_risk then 'at_risk'
              else 'active' end
$$;

-- One row per member of a community: when they first joined it, their status there, and
-- the subscription that currently counts (a live one, the latest if several, else the
-- latest ended one) with its tier.
create view community_membership_source as
select s.creator_id, s.community_id, s.member_id,
       min(s.created_at) as joined_at,
       membership_state(bool_or(s.status <> 'canceled'), bool_or(s.status = 'trialing'), bool_or(s.status = 'active'),
                        bool_or(s.status = 'past_due' or (s.status = 'active' and s.cancel_at_period_end))) as state,
       (array_agg(s.id order by s.status <> 'canceled' desc, s.created_at desc, s.id desc))[1] as subscription_id,
       (array_agg(s.tier_id order by s.status <> 'canceled' desc, s.created_at desc, s.id desc))[1] as tier_id
from subscriptions s
group by s.creator_id, s.community_id, s.member_id;

-- One row per member of a creator, over all the creator's communities; name and e-mail
-- folded for search and order.
create view creator_membership_source as
select s.creator_id, s.member_id,
       min(s.created_at) as joined_at,
       max(s.created_at) as last_joined_at,
       membership_state(bool_or(s.status <> 'canceled'), bool_or(s.status = 'trialing'), bool_or(s.status = 'active'),
                        bool_or(s.status = 'past_due' or (s.status = 'active' and s.cancel_at_period_end))) as state,
       fold(min(m.name)) as name_key,
       -- A newline between the two, so a search never matches across name and e-mail.
       fold(min(m.name)) || E'\n' || fold(min(m.email)) as search
from subscriptions s join members m on m.id = s.member_id
group by s.creator_id, s.member_id;

create table creator_members (
  creator_id uuid not null references creators (id),
  member_id uuid not null references members (id),
  -- First subscription in any of the creator's communities (the processor's creation time).
  joined_at timestamptz not null,
  -- Latest subscription start: inactivity is counted from here at the earliest, so a member
  -- who just (re)joined is not at risk for never having logged.
  last_joined_at timestamptz not null,
  state text not null check (state in ('active', 'trial', 'at_risk', 'churned')),
  -- Last activity in the creator's communities (DESIGN §7), recorded at most once an hour
  -- (activity/activity.ts); null: none yet.
  last_active_at timestamptz,
  name_key text not null,
  search text not null,
  primary key (creator_id, member_id)
);
-- Each list order has its index; the columns the status filter reads ride along, so a page
-- and its bounded count are walked from the index alone.
create index creator_members_joined_idx on creator_members (creator_id, joined_at desc, member_id desc)
  include (state, last_active_at, last_joined_at);
create index creator_members_state_idx on creator_members (creator_id, state, joined_at desc, member_id desc)
  include (last_active_at, last_joined_at);
create index creator_members_active_idx on creator_members (creator_id, last_active_at desc nulls last, member_id desc)
  include (state, last_joined_at);
create index creator_members_name_idx on creator_members (creator_id, name_key collate "C", member_id);
-- Activity updates (hourly per active member) clear the visibility map, and the list's pages and
-- counts are index-only walks that fall back to the table on unset pages: vacuum after 2% of the
-- rows changed rather than the default 20%.
alter table creator_members set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

create table community_members (
  creator_id uuid not null references creators (id),
  community_id uuid not null references communities (id),
  member_id uuid not null references members (id),
  joined_at timestamptz not null,
  state text not null check (state in ('active', 'trial', 'at_risk', 'churned')),
  subscription_id uuid not null references subscriptions (id),
  tier_id uuid not null references tiers (id),
  primary key (creator_id, member_id, community_id)
);
create index community_members_joined_idx on community_members (creator_id, community_id, joined_at desc, member_id desc) include (state);
create index community_members_tier_idx on community_members (creator_id, tier_id, joined_at desc, member_id desc) include (state);

insert into creator_members (creator_id, member_id, joined_at, last_joined_at, state, name_key, search)
select creator_id, member_id, joined_at, last_joined_at, state, name_key, search from creator_membership_source;
-- Activity before this migration: the newest log made in the creator's communities.
update creator_members c set last_active_at = l.at
from (select creator_id, member_id, max(created_at) as at from workout_logs where creator_id is not null group by 1, 2) l
where l.creator_id = c.creator_id and l.member_id = c.member_id;
insert into community_members (creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id)
select creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id from community_membership_source;

-- Substring search (q) by trigrams where pg_trgm can be had (PGlite bundles it; on a
-- PostgreSQL server it is a trusted contrib extension). Without it, search still works by
-- scanning the creator's rows, just not fast at a million members.
do $$
declare ext_schema text;
begin
  -- In public when it exists, so a schema dropped later (a test run's) does not take it along.
  begin
    create extension if not exists pg_trgm schema public;
  exception when others then
    begin
      create extension if not exists pg_trgm;
    exception when others then
      raise notice 'pg_trgm unavailable (%): member search will scan', sqlerrm;
    end;
  end;
  select n.nspname into ext_schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm';
  if ext_schema is not null then
    execute format('create index creator_members_search_idx on creator_members using gin (search %I.gin_trgm_ops)', ext_schema);
  end if;
end
$$;

-- A subscription's history as the mirror saw it change: one row per state the mirror wrote
-- (created, status, cancel at period end, tier or price, a renewal's new period). Times are
-- when the service recorded the change; the processor's own times stay on the subscription
-- (created_at, canceled_at, ended_at). Recorded from this migration on.
create table subscription_changes (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  subscription_id uuid not null references subscriptions (id),
  recorded_at timestamptz not null default now(),
  status text not null,
  cancel_at_period_end boolean not null,
  tier_id uuid not null,
  price_cents bigint not null,
  current_period_end timestamptz
);
create index subscription_changes_subscription_idx on subscription_changes (creator_id, subscription_id, recorded_at, id);
