-- monthly_cents, the same function without STRICT, so PostgreSQL inlines it into the calling
-- statement. A STRICT SQL function is inlined only when its body is strict itself, and a CASE is
-- not: every call ran the function's own executor, ~1.2 µs a row in a plain scan (1M
-- subscriptions: 1.5 s against 0.4 s for the CASE written in place), and tens of microseconds
-- inside a lateral VALUES list, which builds its expressions again for each outer row: the
-- history's one-pass MRR (metrics/history-pass.ts) spent ~35 s of a 90-day backfill at 1M
-- subscriptions there (issue #32). The answers are unchanged, nulls included: a null price or
-- period gives null either way (no CASE branch matches a null period; every branch of a null
-- price is null).
create or replace function monthly_cents(price_cents bigint, billing_period text) returns bigint
language sql immutable parallel safe
as $$
  select case billing_period
    when 'monthly' then price_cents
    when 'quarterly' then (2 * price_cents + 3) / 6
    when 'yearly' then (2 * price_cents + 12) / 24
  end
$$;
