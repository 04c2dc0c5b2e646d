-- Members change tier (issue #28, item 2). An upgrade changes the subscription's price at the
-- processor at once (the mirror's usual price change); a downgrade waits for the end of the
-- period in a processor Subscription Schedule. What the schedule will do next is kept here, as
-- the mirror last read it from the processor, so the member's and the creator's views can
-- show it without asking the processor: the schedule's id, the tier its next phase moves to,
-- and when. All three are null when no change is scheduled; the mirror clears them when the
-- price switches (no later phase differs) or the schedule is released.
alter table subscriptions add column processor_schedule_id text;
alter table subscriptions add column scheduled_tier_id uuid references tiers (id);
alter table subscriptions add column scheduled_change_at timestamptz;
alter table subscriptions add constraint subscriptions_scheduled_change_check
  check ((scheduled_tier_id is null) = (scheduled_change_at is null));
