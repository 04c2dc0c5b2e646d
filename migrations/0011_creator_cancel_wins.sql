-- A creator's own cancel always wins over a community's pause and resume (issue #11): the
-- pause convergence (subscriptions.service convergePause) keeps every live subscription of a
-- creator-canceled row set to cancel at period end, whatever a resume does, and never marks it
-- canceled_by_pause. Invariant: canceled_by_creator implies not canceled_by_pause.
alter table subscriptions add column canceled_by_creator boolean not null default false;

-- One writer per community carries its status to its subscriptions (convergePause): a run
-- holds a lease (token + expiry, renewed before each subscription, so a run that died frees
-- it after two minutes); a run that finds the lease held asks the holder for another pass
-- instead of writing beside it. Two writers could otherwise interleave their processor calls
-- so that a pause's late write survives the resume that should have lifted it.
alter table communities add column pause_lease_token uuid;
alter table communities add column pause_lease_until timestamptz;
alter table communities add column pause_rerun boolean not null default false;
