-- A connected account may run on its own clock: the simulator clock + offset_seconds (never
-- positive when set: a fresh account starts its history in the past, then catches up with
-- the shared clock by advancing). Accounts without a row follow the shared clock. This is
-- how a demo or a test builds months of processor history that ends today without moving
-- the shared clock, which only goes forward and is every other account's time.
CREATE TABLE account_clocks (
  account text PRIMARY KEY,
  offset_seconds bigint NOT NULL
);
