-- The daily metrics history computes a day from the previous stored day plus that day's
-- changes (metrics/history-day.ts), O(changes of the day) instead of a pass over every
-- subscription of the scope (history-pass.ts, which stays for backfills).
--
-- A day's figures are running sums; the row kept all but two of them. The churn's numerator
-- and denominator (members lost in the 30 days, members live 30 days before or new within
-- them) cannot be recovered from the rounded rate, so they are stored. Null on rows written
-- before this migration: the day after such a row is computed by the pass, which stores them.
alter table metrics_daily add column lost_30d int, add column base_30d int;

-- Finding a day's changes by index. Starts: subscriptions_creator_created_idx. Ends: a
-- subscription ends when it stops being live (the rule of migrations/0020:
-- least(coalesce(ended_at, canceled_at, updated_at), lapsed_at) when canceled, else
-- coalesce(lapsed_at, updated_at)). updated_at is kept out of every index: the mirror rewrites
-- it on each webhook, and an indexed column that changes makes renewals non-HOT updates. So
-- this index holds the end without the updated_at fallback, and the rows whose end is that
-- fallback (a canceled row with neither time, a lapsed row without lapsed_at: rows from before
-- 0020, rare) have a small index of their own, read whole.
create index subscriptions_ended_idx on subscriptions
  (creator_id, (case when status = 'canceled' then least(coalesce(ended_at, canceled_at), lapsed_at) else lapsed_at end))
  where not subscription_live(status);
create index subscriptions_ended_fallback_idx on subscriptions (creator_id)
  where not subscription_live(status)
    and ((status = 'canceled' and ended_at is null and canceled_at is null) or (status <> 'canceled' and lapsed_at is null));
-- Paying after a trial starts the day the trial ends.
create index subscriptions_trial_end_idx on subscriptions (creator_id, trial_end) where trial_end is not null;
-- Prices recorded on a day, and what the mirror wrote since a day was stored.
create index subscription_changes_recorded_idx on subscription_changes (creator_id, recorded_at);
