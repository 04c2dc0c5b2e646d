import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, eventually } from '../billing-kit.js';
import { json } from '../helpers.js';
import { browserSkipReason, browserSuite } from './browser.js';
import { waitForScreen } from './dashboard-pages.js';
import { apiGet, dashboardWorld, signedIn, type DashboardWorld } from './dashboard-world.js';

/**
 * The feed and money screens in Chromium (issue #29): a post written in the composer reaches
 * the API as the creator chose it, moderation goes through a confirmation, and the balance is
 * the API's figure.
 */
describe.skipIf(browserSkipReason !== undefined)(`the feed and money screens${browserSkipReason ? ` (skipped: ${browserSkipReason})` : ''}`, browserSuite, () => {
  let w: DashboardWorld;
  beforeAll(async () => {
    w = await dashboardWorld();
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it('publishes a post locked to Gold from the composer: the API has it locked, a Bronze member reads it locked', async () => {
    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/feed`);
    await waitForScreen(page);
    await page.getByTestId('new-post').click();
    await page.getByLabel('Community').selectOption({ label: 'Strong Mornings' });
    await page.getByLabel('Who can read it').selectOption({ label: 'Gold' });
    await page.getByLabel('Text').fill('**Gold only**: the deload week, day by day, with the reasons behind every change we make to it.');
    await page.getByTestId('composer-submit').click();
    await page.getByRole('status').getByText('Post published.').waitFor();

    const [post] = (await apiGet(w, `/api/v1/posts?community_id=${w.communityId}`)).data;
    expect(post).toMatchObject({ tier_min_id: w.goldId, content: expect.stringContaining('Gold only') });
    const row = page.locator(`[data-testid=post-row][data-post-id="${post.id}"]`);
    expect(await row.getByTestId('post-lock').textContent()).toBe('Gold and above');
    const asBronze = await w.t.app.inject({ method: 'GET', url: `/api/v1/member/posts/${post.id}`, headers: w.bronze.headers });
    expect(asBronze.statusCode, asBronze.body).toBe(200);
    expect(json(asBronze).data).toMatchObject({ locked: true, upgrade_tier_id: w.goldId });
    expect(asBronze.body).not.toContain('with the reasons behind every change');
    await context.close();
  });

  it("deletes a member's comment only after a confirmation naming its author, and the post's count drops", async () => {
    const post = (await apiGet(w, `/api/v1/posts?community_id=${w.communityId}`)).data[0];
    const commented = await w.t.app.inject({ method: 'POST', url: `/api/v1/member/posts/${post.id}/comments`, headers: w.gold.headers, payload: { body: 'Saved it, thanks!' } });
    expect(commented.statusCode, commented.body).toBe(201);
    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/feed`);
    await waitForScreen(page);
    const row = page.locator(`[data-testid=post-row][data-post-id="${post.id}"]`);
    await row.getByTestId('post-comments-toggle').click();
    const comment = row.getByTestId('comment-row');
    await comment.getByText('Saved it, thanks!').waitFor();
    await comment.getByTestId('comment-delete').click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('Gabriela Gold');
    expect((await apiGet(w, `/api/v1/posts/${post.id}`)).data.comments_count).toBe(1);
    await dialog.getByRole('button', { name: 'Delete comment' }).click();
    await comment.waitFor({ state: 'detached' });
    expect((await apiGet(w, `/api/v1/posts/${post.id}`)).data.comments_count).toBe(0);
    // The count comes from the post list's reload, which lands after the comment leaves its list.
    await expect.poll(() => row.getByTestId('post-comments').textContent(), { timeout: 20_000, interval: 100 }).toBe('0 comments');
    await context.close();
  });

  it('shows the available balance as GET /payouts/balance has it, and no manual payout form on an automatic schedule', async () => {
    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/money`);
    await waitForScreen(page);
    const balance = (await apiGet(w, '/api/v1/payouts/balance')).data;
    const expected = await page.evaluate(
      ([cents, cur]) => new Intl.NumberFormat(undefined, { style: 'currency', currency: String(cur).toUpperCase() }).format(Number(cents) / 100),
      [balance.available_cents, balance.currency],
    );
    expect(await page.getByTestId('balance-available').locator('.stat-value').textContent()).toBe(expected);
    const account = json(await w.t.app.inject({ method: 'GET', url: '/api/v1/account', headers: w.creator.headers })).data;
    expect(account.payout_schedule).not.toBe('manual');
    expect(await page.getByTestId('manual-payout').count()).toBe(0);
    expect(await page.getByTestId('payout-row').count()).toBe((await apiGet(w, '/api/v1/payouts?limit=20')).data.length);
    await context.close();
  });

  it('pays out an amount typed in reais as exact cents, after a confirmation naming it and the bank account', async () => {
    // The creator switches to manual payouts in the processor's dashboard; the funds of the two
    // checkouts become available 7 days after the charges.
    const { processor_account_id: account } = (await apiGet(w, '/api/v1/account')).data;
    await w.t.stripe.accounts.update(account, { settings: { payouts: { schedule: { interval: 'manual' } } } });
    await eventually(w.t, async () => expect((await apiGet(w, '/api/v1/account')).data.payout_schedule).toBe('manual'));
    await advanceDays(w.t, 8);
    expect((await apiGet(w, '/api/v1/payouts/balance')).data.available_cents).toBeGreaterThan(1029);

    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/money`);
    await waitForScreen(page);
    const form = page.getByTestId('manual-payout');
    await form.getByLabel('Amount').fill('10.29');
    await form.getByRole('button', { name: 'Pay out…' }).click();
    const dialog = page.getByRole('dialog');
    // 10.29 × 100 is 1028.99… in floating point: the form must read the digits, not multiply.
    const { currency } = (await apiGet(w, '/api/v1/payouts/balance')).data;
    const amount = await page.evaluate((cur) => new Intl.NumberFormat(undefined, { style: 'currency', currency: String(cur).toUpperCase() }).format(10.29), currency);
    expect(await dialog.textContent()).toContain(`${amount} will leave your available balance and go to the bank account on file`);
    await dialog.getByRole('button', { name: `Pay out ${amount}` }).click();
    await page.getByTestId('manual-payout-done').waitFor();
    const [payout] = (await apiGet(w, '/api/v1/payouts?limit=1')).data;
    expect(payout).toMatchObject({ amount_cents: 1029, method: 'manual' });
    await page.locator(`[data-testid=payout-row][data-payout-id="${payout.id}"]`).waitFor();
    await context.close();
  });
});
