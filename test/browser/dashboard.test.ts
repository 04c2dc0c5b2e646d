import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSkipReason, browserSuite } from './browser.js';
import { axeViolations, horizontalOverflow, SCREEN_PATHS, waitForScreen } from './dashboard-pages.js';
import { apiGet, dashboardWorld, signedIn, type DashboardWorld } from './dashboard-world.js';

/**
 * The creator's dashboard in Chromium (issue #29), against a started server: signing in by
 * link, the overview's figures against the API, and every screen usable at 375 px with no
 * serious or critical axe-core violation.
 */
describe.skipIf(browserSkipReason !== undefined)(`the dashboard in Chromium${browserSkipReason ? ` (skipped: ${browserSkipReason})` : ''}`, browserSuite, () => {
  let w: DashboardWorld;
  beforeAll(async () => {
    w = await dashboardWorld();
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it('signs in by a one-time link, into an HttpOnly cookie the page itself cannot read', async () => {
    const { context, page } = await signedIn(w);
    expect(new URL(page.url()).pathname).toBe('/dashboard/');
    await waitForScreen(page);
    expect(await page.locator('h1').textContent()).toBe('Overview');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'tribes_session', httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await context.close();
  });

  it("shows the creator's MRR and paying members exactly as GET /creator-metrics has them", async () => {
    const { context, page } = await signedIn(w);
    await waitForScreen(page);
    const metrics = (await apiGet(w, '/api/v1/creator-metrics')).data;
    const currency = (await apiGet(w, '/api/v1/payouts/balance')).data.currency as string;
    expect(metrics.mrr_cents).toBe(1990 + 4990 + 3 * 4990);
    // Formatted by the browser's own Intl, as the page formats it.
    const expected = await page.evaluate(([cents, cur]) => new Intl.NumberFormat(undefined, { style: 'currency', currency: String(cur).toUpperCase() }).format(Number(cents) / 100), [metrics.mrr_cents, currency]);
    expect(await page.getByTestId('mrr').locator('.stat-value').textContent()).toBe(expected);
    expect(await page.getByTestId('paying').locator('.stat-value').textContent()).toBe(String(metrics.active_subscribers));
    await context.close();
  });

  it('is reachable by keyboard: the skip link first, then the navigation, which opens a screen with Enter', async () => {
    const { context, page } = await signedIn(w);
    await waitForScreen(page);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    let reached = '';
    for (let i = 0; i < 5 && reached !== 'Members'; i++) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate(() => document.activeElement?.textContent)) ?? '';
    }
    expect(reached).toBe('Members');
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/members$/);
    await waitForScreen(page);
    expect(await page.locator('h1').textContent()).toBe('Members');
    await context.close();
  });

  it('draws every screen at 375 px wide without sideways scroll or a serious accessibility violation', async () => {
    const { context, page } = await signedIn(w, { width: 375, height: 800 });
    const someone = (await apiGet(w, '/api/v1/members?limit=1')).data[0].id as string;
    for (const screen of [...SCREEN_PATHS, `member/${someone}`]) {
      await page.goto(`${w.origin}/dashboard/#/${screen}`);
      await waitForScreen(page);
      expect(await page.locator('.error').allTextContents(), screen).toEqual([]);
      expect(await horizontalOverflow(page), screen).toBe(0);
      expect(await axeViolations(page), screen).toEqual([]);
    }
    await context.close();
  });
});
