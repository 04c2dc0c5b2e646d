-- Past MRR at the price billed each day (issue #32, item 5): subscription_changes (0013) already
-- records every price the mirror writes, with when; MRR also needs the billing period it was
-- billed over, which a tier change may switch (monthly to yearly). Recorded from now on; a
-- record made before this migration has none, and the history counts it at the subscription's
-- current period (metrics/history-pass.ts).
alter table subscription_changes add column billing_period text check (billing_period in ('monthly', 'quarterly', 'yearly'));
