import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, type Creator, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

const accountUpdates = (account: string) => kit.receiver.ofType('account.updated').filter((e) => e.account === account);

const openSession = (c: Creator) =>
  kit.stripe.checkout.sessions.create(
    { mode: 'subscription', line_items: [{ price: c.price.id, quantity: 1 }], success_url: 'http://app.test/ok', cancel_url: 'http://app.test/cancel' },
    c.opts,
  );

/** A plain browser request that does not follow redirects, so the 303 and its Location can be checked. */
const browse = (url: string, form?: Record<string, string>) =>
  fetch(url, {
    redirect: 'manual',
    ...(form ? { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() } : {}),
  });

const onboardingLink = (account: string) =>
  kit.stripe.accountLinks.create({ account, type: 'account_onboarding', refresh_url: 'http://app.test/refresh', return_url: 'http://app.test/return' });

describe('a new connected account', () => {
  it('starts not onboarded, with the usual Express requirements past due and charges disabled', async () => {
    const account = await kit.stripe.accounts.create({ type: 'express', country: 'US' });
    expect(account).toMatchObject({
      details_submitted: false,
      charges_enabled: false,
      payouts_enabled: false,
      capabilities: { card_payments: 'inactive', transfers: 'inactive' },
      tos_acceptance: { date: null },
      requirements: { disabled_reason: 'requirements.past_due', current_deadline: null, pending_verification: [], errors: [], alternatives: [] },
    });
    for (const list of ['currently_due', 'eventually_due', 'past_due'] as const) {
      expect(account.requirements![list]).toEqual(expect.arrayContaining(['business_profile.url', 'external_account', 'individual.dob.day', 'individual.first_name', 'tos_acceptance.date']));
    }
  });

  it('cannot open a checkout session until it has completed onboarding', async () => {
    const c = await createCreator(kit, { skipOnboarding: true });
    await expect(openSession(c)).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, message: expect.stringContaining('cannot currently make charges') });
    expect((await kit.helper(`/v1/test_helpers/accounts/${c.account}/onboard`, {})).status).toBe(200);
    expect((await openSession(c)).status).toBe('open');
  });

  it('cannot create a payout while payouts are disabled', async () => {
    const c = await createCreator(kit, { skipOnboarding: true, schedule: 'manual' });
    await expect(kit.stripe.payouts.create({ amount: 100, currency: 'usd' }, c.opts)).rejects.toMatchObject({ statusCode: 400, code: 'payouts_not_allowed' });
  });
});

describe('the onboard test helper', () => {
  it('completes onboarding and emits account.updated once, however often it is called', async () => {
    const c = await createCreator(kit, { skipOnboarding: true });
    const first = await kit.helper(`/v1/test_helpers/accounts/${c.account}/onboard`, {});
    expect(first.body).toMatchObject({
      details_submitted: true,
      charges_enabled: true,
      payouts_enabled: true,
      capabilities: { card_payments: 'active', transfers: 'active' },
      requirements: { currently_due: [], eventually_due: [], past_due: [], pending_verification: [], disabled_reason: null, current_deadline: null },
    });
    // The account's now, give or take the second the call took.
    expect(Math.abs(first.body.tos_acceptance.date - (await kit.now()))).toBeLessThan(5);
    const again = await kit.helper(`/v1/test_helpers/accounts/${c.account}/onboard`, {});
    expect(again.body).toEqual(first.body);
    const updates = accountUpdates(c.account);
    expect(updates).toHaveLength(1);
    expect(updates[0]!.data.previous_attributes).toMatchObject({ charges_enabled: false, details_submitted: false, payouts_enabled: false });
  });

  it('answers an unknown account with a Stripe 404', async () => {
    const res = await kit.helper('/v1/test_helpers/accounts/acct_nope/onboard', {});
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
  });
});

describe('requirements with a deadline', () => {
  const doc = 'individual.verification.document';

  it('disable charges with requirements.past_due once the deadline passes unmet', async () => {
    const c = await createCreator(kit);
    const now = await kit.now();
    const added = await kit.helper(`/v1/test_helpers/accounts/${c.account}/requirements`, { currently_due: [doc], deadline_seconds: 3 * DAY });
    expect(added.status).toBe(200);
    expect(added.body.requirements).toMatchObject({ currently_due: [doc], eventually_due: [doc] });
    expect(Math.abs(added.body.requirements.current_deadline - (now + 3 * DAY))).toBeLessThan(5);
    expect(added.body.charges_enabled).toBe(true);
    await kit.advance(3 * DAY + 1);
    const account = await kit.stripe.accounts.retrieve(c.account);
    expect(account).toMatchObject({ charges_enabled: false, requirements: { past_due: [doc], disabled_reason: 'requirements.past_due', current_deadline: null } });
    const last = accountUpdates(c.account).at(-1)!;
    expect(last.data.object.charges_enabled).toBe(false);
    expect(last.data.previous_attributes.charges_enabled).toBe(true);
    await expect(openSession(c)).rejects.toMatchObject({ statusCode: 400 });
  });

  it('are met by onboarding before the deadline, which then passes without effect', async () => {
    const c = await createCreator(kit);
    await kit.helper(`/v1/test_helpers/accounts/${c.account}/requirements`, { currently_due: [doc], deadline_seconds: DAY, pending_verification: ['individual.id_number'] });
    const during = await kit.stripe.accounts.retrieve(c.account);
    expect(during.requirements?.pending_verification).toEqual(['individual.id_number']);
    await kit.helper(`/v1/test_helpers/accounts/${c.account}/onboard`, {});
    const updates = accountUpdates(c.account).length;
    await kit.advance(2 * DAY);
    const account = await kit.stripe.accounts.retrieve(c.account);
    expect(account).toMatchObject({ charges_enabled: true, requirements: { currently_due: [], past_due: [], pending_verification: [], disabled_reason: null } });
    expect(accountUpdates(c.account)).toHaveLength(updates);
  });

  it('are refused with a 400 when the body is not a list of field names with a whole-second deadline', async () => {
    const c = await createCreator(kit);
    const post = (body: unknown) => kit.helper(`/v1/test_helpers/accounts/${c.account}/requirements`, body);
    for (const body of [{}, { currently_due: [], deadline_seconds: 1 }, { currently_due: [''], deadline_seconds: 1 }, { currently_due: doc, deadline_seconds: 1 }, { currently_due: [doc] }, { currently_due: [doc], deadline_seconds: -1 }, { currently_due: [doc], deadline_seconds: 1.5 }]) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.type).toBe('invalid_request_error');
    }
  });
});

describe('the hosted onboarding page', () => {
  it('shows a form once, and Continue completes onboarding and returns to return_url', async () => {
    const account = await kit.stripe.accounts.create({ type: 'express', country: 'BR', business_profile: { name: 'Força <Total>' } });
    const link = await onboardingLink(account.id);
    expect(link).toMatchObject({ object: 'account_link', expires_at: link.created + 300 });
    const page = await browse(link.url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<form method="post">');
    expect(html).toContain('Continue');
    expect(html).toContain('Força &lt;Total&gt;');
    expect(html).toContain('href="http://app.test/return"');
    const done = await browse(link.url, { business_name: 'Força <Total>' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('http://app.test/return');
    expect(await kit.stripe.accounts.retrieve(account.id)).toMatchObject({ details_submitted: true, charges_enabled: true, payouts_enabled: true });
    expect(accountUpdates(account.id)).toHaveLength(1);
  });

  it('sends a used link and an expired one to refresh_url', async () => {
    const { account } = await createCreator(kit, { skipOnboarding: true });
    const used = await onboardingLink(account);
    expect((await browse(used.url)).status).toBe(200);
    const again = await browse(used.url);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('http://app.test/refresh');
    const stale = await onboardingLink(account);
    await kit.advance(301);
    const late = await browse(stale.url);
    expect(late.status).toBe(303);
    expect(late.headers.get('location')).toBe('http://app.test/refresh');
    expect((await kit.stripe.accounts.retrieve(account)).details_submitted).toBe(false);
    expect((await browse(`${kit.sim.url}/connect/onboarding/acctlink_nope`)).status).toBe(404);
  });

  it('is reached only through links made with a valid type and both URLs', async () => {
    const { account } = await createCreator(kit, { skipOnboarding: true });
    const base = { account, type: 'account_onboarding', refresh_url: 'http://app.test/refresh', return_url: 'http://app.test/return' } as const;
    await expect(kit.stripe.accountLinks.create({ ...base, type: 'custom_account_update' as never })).rejects.toMatchObject({ statusCode: 400, param: 'type' });
    await expect(kit.stripe.accountLinks.create({ ...base, refresh_url: undefined })).rejects.toMatchObject({ statusCode: 400, code: 'parameter_missing', param: 'refresh_url' });
    await expect(kit.stripe.accountLinks.create({ ...base, return_url: undefined })).rejects.toMatchObject({ statusCode: 400, code: 'parameter_missing', param: 'return_url' });
    const update = await kit.stripe.accountLinks.create({ ...base, type: 'account_update', collection_options: { fields: 'eventually_due' } });
    expect(update.url).toContain('/connect/onboarding/');
  });
});

describe('the hosted dashboard', () => {
  it('is refused through a login link before onboarding', async () => {
    const { account } = await createCreator(kit, { skipOnboarding: true });
    await expect(kit.stripe.accounts.createLoginLink(account)).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, message: expect.stringContaining('not completed onboarding') });
  });

  it('changes the payout schedule as the API would, emitting account.updated, until its link expires', async () => {
    const c = await createCreator(kit);
    const link = await kit.stripe.accounts.createLoginLink(c.account);
    expect(link.url).not.toContain(c.account);
    expect((await browse(`${kit.sim.url}/connect/dashboard/${c.account}`)).status).toBe(404);
    const page = await browse(link.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/No balance yet|available/);
    const before = accountUpdates(c.account).length;
    const saved = await browse(link.url, { interval: 'weekly', weekly_anchor: 'friday', monthly_anchor: '1' });
    expect(saved.status).toBe(200);
    expect(await saved.text()).toContain('Payout schedule saved.');
    expect((await kit.stripe.accounts.retrieve(c.account)).settings?.payouts?.schedule).toEqual({ delay_days: 7, interval: 'weekly', weekly_anchor: 'friday' });
    const updates = accountUpdates(c.account);
    expect(updates).toHaveLength(before + 1);
    expect(updates.at(-1)!.data.previous_attributes.settings.payouts.schedule).toMatchObject({ interval: 'daily' });
    const refused = await browse(link.url, { interval: 'yearly' });
    expect(refused.status).toBe(400);
    await kit.advance(301);
    expect((await browse(link.url)).status).toBe(404);
  });
});
