import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../logging.js';
import { advanceDays, eventually, openCheckout, pay, simHelper, subscriptionsOf } from '../../../test/billing-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, uniq, type TestApp, type TestCreator } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  // The app listens: account.updated arrives from the simulator as it would from Stripe.
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

const accountOf = async (creator: TestCreator) => {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/account', headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data;
};

const onboardingLink = async (creator: TestCreator, headers: Record<string, string> = {}) => {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/account/onboarding-link', headers: { ...creator.headers, ...headers } });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data as { url: string | null; expires_at: string };
};

/** A browser's request that does not follow redirects. */
const browse = (url: string, form?: Record<string, string>) =>
  fetch(url, form ? { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() } : { redirect: 'manual' });

/** A Tribes URL the processor redirected to, requested through inject (path and query). */
const visitTribes = (url: string) => {
  const u = new URL(url);
  return t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
};

async function sellingCreator(opts: { onboarded?: boolean } = {}) {
  const creator = await createCreator(t, { onboarded: opts.onboarded ?? false });
  const community = await createCommunity(t, creator, { name: `Box ${uniq()}` });
  const tier = await createTier(t, creator, community.id, { price_cents: 5000 });
  return { creator, community, tier };
}

describe('onboarding at the processor', () => {
  it('takes a creator from an account that cannot charge, through the hosted onboarding page, to a first paid member', async () => {
    const { creator, community, tier } = await sellingCreator();

    const before = await accountOf(creator);
    expect(before).toMatchObject({ status: 'onboarding_required', charges_enabled: false, payouts_enabled: false, details_submitted: false, payout_schedule: 'daily' });
    expect(before.requirements.currently_due.length).toBeGreaterThan(0);
    expect(before.requirements.disabled_reason).toBe('requirements.past_due');

    // Tiers were prepared; discovery lists the community as not open yet, and checkout says why.
    const listed = json(await t.app.inject({ method: 'GET', url: `/api/v1/discover/communities?q=${encodeURIComponent(community.name as string)}` })).data;
    expect(listed.find((c: { id: string }) => c.id === community.id)?.accepting_members).toBe(false);
    const member = await createMember(t);
    const refused = await openCheckout(t, member, tier.id);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(json(refused).error.code).toBe('payments_not_enabled');

    // The creator follows the link, sees the form, presses Continue, and lands back on Tribes.
    const link = await onboardingLink(creator);
    expect(Date.parse(link.expires_at)).toBeGreaterThan(Date.now() - 60_000);
    const form = await browse(link.url!);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('Continue');
    const submitted = await browse(link.url!, { business_name: 'Test Creator' });
    expect(submitted.status).toBe(303);
    const back = submitted.headers.get('location')!;
    expect(back.startsWith(`${t.config.publicUrl}/connect/onboarding/return?link=`)).toBe(true);
    const landing = await visitTribes(back);
    expect(landing.statusCode).toBe(200);
    expect(landing.body).toContain('Payments are set up');

    const after = await accountOf(creator);
    expect(after).toMatchObject({ status: 'active', charges_enabled: true, payouts_enabled: true, details_submitted: true });
    expect(after.requirements).toMatchObject({ currently_due: [], past_due: [], disabled_reason: null });
    const open = json(await t.app.inject({ method: 'GET', url: `/api/v1/discover/communities?q=${encodeURIComponent(community.name as string)}` })).data;
    expect(open.find((c: { id: string }) => c.id === community.id)?.accepting_members).toBe(true);

    const opened = await openCheckout(t, member, tier.id);
    expect(opened.statusCode, opened.body).toBe(201);
    expect((await pay(t, json(opened).data.processor_session_id)).status).toBe(200);
    await eventually(t, async () => {
      expect((await subscriptionsOf(t, creator)).map((s) => s.status)).toEqual(['active']);
    });
  });

  it('shows a requirement coming due as action required, then restricts the account when its deadline passes', async () => {
    const { creator, tier } = await sellingCreator({ onboarded: true });
    const { processor_account_id: account } = await accountOf(creator);
    const added = await simHelper(t, `accounts/${account}/requirements`, { currently_due: ['individual.verification.document'], deadline_seconds: 86_400 });
    expect(added.status).toBe(200);
    await t.app.tasks.idle();

    const due = await accountOf(creator);
    expect(due).toMatchObject({ status: 'action_required', charges_enabled: true });
    expect(due.requirements.currently_due).toEqual(['individual.verification.document']);
    expect(due.requirements.current_deadline).not.toBeNull();

    await advanceDays(t, 2);
    const restricted = await accountOf(creator);
    expect(restricted).toMatchObject({ status: 'restricted', charges_enabled: false });
    expect(restricted.requirements.past_due).toContain('individual.verification.document');
    expect(restricted.requirements.disabled_reason).toBe('requirements.past_due');
    const refused = await openCheckout(t, await createMember(t), tier.id);
    expect(json(refused).error.code).toBe('payments_not_enabled');
  });

  it('makes a new link from a spent one through the refresh URL, once, for the same account', async () => {
    const { creator } = await sellingCreator();
    const link = await onboardingLink(creator);
    expect((await browse(link.url!)).status).toBe(200);
    // Opened once: the processor sends a second visit to Tribes' refresh URL.
    const second = await browse(link.url!);
    expect(second.status).toBe(303);
    const refreshUrl = second.headers.get('location')!;
    expect(refreshUrl.startsWith(`${t.config.publicUrl}/connect/onboarding/refresh?link=`)).toBe(true);

    const refreshed = await visitTribes(refreshUrl);
    expect(refreshed.statusCode).toBe(303);
    const fresh = refreshed.headers.location as string;
    expect(fresh).not.toBe(link.url);
    expect(refreshed.headers['cache-control']).toBe('no-store');
    // The new link onboards this creator's account.
    expect((await browse(fresh)).status).toBe(200);
    expect((await browse(fresh, {})).status).toBe(303);
    await t.app.tasks.idle();
    expect((await accountOf(creator)).status).toBe('active');

    // The refresh URL works once: found later, it opens nothing.
    const again = await visitTribes(refreshUrl);
    expect(again.statusCode).toBe(410);
    expect(again.body).toContain('expired');
    expect((await t.app.inject({ method: 'GET', url: '/connect/onboarding/refresh?link=unknown0token' })).statusCode).toBe(410);
  });

  it('answers a replayed onboarding link request without the link, which is never stored', async () => {
    const { creator } = await sellingCreator();
    const key = { 'idempotency-key': `link-${Date.now()}` };
    const first = await onboardingLink(creator, key);
    expect(first.url).toMatch(/^http/);
    const replay = await onboardingLink(creator, key);
    expect(replay).toEqual({ url: null, expires_at: first.expires_at });
    const stored = await t.database.db.selectFrom('idempotency_keys').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(first.url!);
  });
});

describe("the processor's dashboard", () => {
  it('opens only after onboarding, and a schedule changed there reaches the account and manual payouts', async () => {
    const { creator } = await sellingCreator();
    const early = await t.app.inject({ method: 'POST', url: '/api/v1/account/dashboard-link', headers: creator.headers });
    expect(early.statusCode, early.body).toBe(409);
    expect(json(early).error.code).toBe('onboarding_required');
    const payout = await t.app.inject({ method: 'POST', url: '/api/v1/payouts/manual', headers: creator.headers, payload: { amount_cents: 1000 } });
    expect(payout.statusCode, payout.body).toBe(422);
    expect(json(payout).error.code).toBe('payouts_not_enabled');

    const { processor_account_id: account } = await accountOf(creator);
    expect((await simHelper(t, `accounts/${account}/onboard`)).status).toBe(200);
    await t.app.tasks.idle();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/account/dashboard-link', headers: creator.headers });
    expect(res.statusCode, res.body).toBe(201);
    const { url } = json(res).data;
    const page = await browse(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Balance');
    expect((await browse(url, { interval: 'manual' })).status).toBe(200);
    await eventually(t, async () => {
      expect((await accountOf(creator)).payout_schedule).toBe('manual');
    });
    // Manual payouts are now allowed; with nothing available the processor's balance says no.
    const manual = await t.app.inject({ method: 'POST', url: '/api/v1/payouts/manual', headers: creator.headers, payload: { amount_cents: 1000 } });
    expect(json(manual).error.code).toBe('insufficient_balance');
  });
});

describe('an app that misses the events', () => {
  it('learns the account was onboarded from reconciliation, and never writes a link token to its log', async () => {
    const lines: string[] = [];
    const logger = await createLogger({ level: 'info', format: 'json', destination: { write: (line: string) => void lines.push(line) } });
    const quiet = await buildTestApp({ logger });
    try {
      const creator = await createCreator(quiet, { onboarded: false });
      const account = json(await quiet.app.inject({ method: 'GET', url: '/api/v1/account', headers: creator.headers })).data;
      expect(account.status).toBe('onboarding_required');
      // Onboarded at the processor; the event is lost (this app does not listen).
      const onboarded = await fetch(`${quiet.simulator.url}/v1/test_helpers/accounts/${account.processor_account_id}/onboard`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(onboarded.status).toBe(200);
      expect(json(await quiet.app.inject({ method: 'GET', url: '/api/v1/account', headers: creator.headers })).data.status).toBe('onboarding_required');
      const report = await quiet.app.reconciler.run({ creatorId: creator.id });
      expect(report.accounts_updated).toBe(1);
      expect(json(await quiet.app.inject({ method: 'GET', url: '/api/v1/account', headers: creator.headers })).data.status).toBe('active');

      const token = `Secret${uniq()}Token`;
      expect((await quiet.app.inject({ method: 'GET', url: `/connect/onboarding/refresh?link=${token}` })).statusCode).toBe(410);
      expect(lines.some((l) => l.includes('/connect/onboarding/refresh?link=[redacted]'))).toBe(true);
      expect(lines.filter((l) => l.includes(token))).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
});
