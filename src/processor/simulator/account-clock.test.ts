import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribed, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

const accountNow = async (account: string) => {
  const res = await fetch(`${kit.sim.url}/v1/test_helpers/accounts/${account}/clock`);
  return ((await res.json()) as { now: number }).now;
};
const advanceAccount = async (account: string, seconds: number) => {
  const res = await kit.helper(`/v1/test_helpers/accounts/${account}/clock/advance`, { seconds });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body.now as number;
};

describe('an account with its own clock', () => {
  it('makes its history in the past and catches up with the shared clock, leaving other accounts and the shared clock alone', async () => {
    const shared = await kit.now();
    const past = await createCreator(kit, { amount: 1000, clockAt: shared - 90 * DAY, schedule: 'manual' });
    const present = await createCreator(kit, { amount: 1000, schedule: 'manual' });
    expect(await kit.stripe.accounts.retrieve(past.account)).toMatchObject({ created: shared - 90 * DAY });

    const sub = await subscribed(kit, past);
    expect(sub.created).toBeGreaterThanOrEqual(shared - 90 * DAY);
    expect(sub.created).toBeLessThan(shared - 89 * DAY);
    const other = await subscribed(kit, present);
    expect(other.created).toBeGreaterThanOrEqual(shared);

    // Two renewals on the account's own time; the shared clock and the other account do not move.
    await advanceAccount(past.account, 65 * DAY);
    const invoices = await kit.stripe.invoices.list({ subscription: sub.id }, past.opts);
    expect(invoices.data.map((i) => i.status)).toEqual(['paid', 'paid', 'paid']);
    expect(await kit.now()).toBeLessThan(shared + 60);
    expect((await kit.stripe.invoices.list({ subscription: other.id }, present.opts)).data).toHaveLength(1);
    // Funds of the first charge became available 7 days after it, on the account's clock.
    const balance = await kit.stripe.balance.retrieve({}, past.opts);
    expect(balance.available[0]!.amount).toBe(2 * 900);

    // Advancing the shared clock moves both: the account stays 25 days behind.
    await kit.advance(DAY);
    const gap = (await kit.now()) - (await accountNow(past.account));
    expect(gap).toBeGreaterThanOrEqual(25 * DAY - 5);
    expect(gap).toBeLessThanOrEqual(25 * DAY + 5);
    expect((await kit.stripe.invoices.list({ subscription: sub.id }, past.opts)).data).toHaveLength(3);
  });

  it('has its due work run by advances of the shared clock, judged on its own time', async () => {
    const shared = await kit.now();
    const c = await createCreator(kit, { amount: 1000, clockAt: shared - 10 * DAY, schedule: 'manual' });
    const sub = await subscribed(kit, c);
    // The renewal is due a month after the account's subscription: after a month of advancing,
    // at about shared + 21 days of the time before the advances, as the account is 10 days behind.
    await kit.advance(25 * DAY);
    expect((await kit.stripe.invoices.list({ subscription: sub.id }, c.opts)).data).toHaveLength(1);
    await kit.advance(7 * DAY);
    const invoices = (await kit.stripe.invoices.list({ subscription: sub.id }, c.opts)).data;
    expect(invoices).toHaveLength(2);
    // Dated at the period boundary on the account's clock, not at the shared time.
    expect(invoices[0]!.created).toBeGreaterThan(shared + 19 * DAY);
    expect(invoices[0]!.created).toBeLessThan(shared + 22 * DAY);
  });

  it('can only be started in the past, on an account that has made nothing yet', async () => {
    const shared = await kit.now();
    const c = await createCreator(kit, {});
    const late = await kit.helper(`/v1/test_helpers/accounts/${c.account}/clock`, { now: shared - DAY });
    expect(late.status).toBe(400);
    expect(late.body.error.message).toContain('has already made objects');

    const fresh = await kit.stripe.accounts.create({ type: 'express', country: 'US' });
    const ahead = await kit.helper(`/v1/test_helpers/accounts/${fresh.id}/clock`, { now: shared + DAY });
    expect(ahead.status).toBe(400);
    expect(ahead.body.error).toMatchObject({ param: 'now' });
    const missing = await kit.helper('/v1/test_helpers/accounts/acct_nope/clock', { now: shared - DAY });
    expect(missing.status).toBe(404);
  });
});
