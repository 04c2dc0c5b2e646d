-- The tier a payment paid for (issue #28 follow-up): a member's payments list showed the
-- subscription's current tier, so after a tier change every older receipt named the new one.
-- Written by the payment mirror from the invoice's charge line (its largest line: the renewal's
-- only one, or an upgrade's new-price line beside its credit). Null for payments mirrored
-- before this migration, which keep showing the subscription's tier.
alter table payments add column tier_id uuid references tiers (id);
