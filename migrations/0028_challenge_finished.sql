-- challenge.finished (outgoing events, issue #30): sent once per challenge, by whichever node's
-- standings job first moves finished_event_at from null in the transaction that writes the
-- event (src/modules/challenges/standings.ts). Challenges that ended before this migration
-- count as told: their end is not news.
alter table challenges add column finished_event_at timestamptz;
update challenges set finished_event_at = ends_at where ends_at <= now();
create index challenges_unfinished_idx on challenges (ends_at) where finished_event_at is null and canceled_at is null;
