-- Members' self-service billing (issue #28, items 1, 3 and 4).
--
-- The processor's customer portal needs a configuration on each creator's connected account
-- (Stripe: a portal session on a connected account without one is refused). It is created on
-- a member's first portal visit, keyed by the creator's id at the processor, and its id kept
-- here so later visits skip the call.
alter table creators add column billing_portal_configuration_id text;

-- Which payment a refund gives back: the refund mirror (payments-sync) knows the payment
-- intent of every refund it reads and now keeps it. Refunds mirrored before this migration
-- get it from the next reconciliation (which re-reads every refund of the account); until
-- then a member's payment list does not show them.
alter table refunds add column processor_payment_intent_id text;
create index refunds_payment_intent_idx on refunds (processor_payment_intent_id) where processor_payment_intent_id is not null;

-- One live subscription per member and community (checkout's 409 already_member) is looked
-- up through subscriptions_member_live_idx (member_id, community_id, live statuses only:
-- migrations/0005), and a member's payments through subscriptions_member_created_idx then
-- payments_subscription_idx: no new index on subscriptions or payments is needed.
