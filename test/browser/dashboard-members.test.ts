import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers.js';
import { browserSkipReason, browserSuite } from './browser.js';
import { waitForScreen } from './dashboard-pages.js';
import { apiGet, dashboardWorld, signedIn, type DashboardWorld } from './dashboard-world.js';

/**
 * The members screens in Chromium (issue #29), each checked against the creator API: the
 * at-risk filter, the CSV export, and a cancel made through its confirmation.
 */
describe.skipIf(browserSkipReason !== undefined)(`the dashboard's members in Chromium${browserSkipReason ? ` (skipped: ${browserSkipReason})` : ''}`, browserSuite, () => {
  let w: DashboardWorld;
  beforeAll(async () => {
    w = await dashboardWorld();
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it('filters the members at risk, the ones the API lists, and opens one', async () => {
    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/members`);
    await waitForScreen(page);
    await page.getByTestId('status-chip-at_risk').check();
    await page.waitForURL(/status=at_risk/);
    await waitForScreen(page);
    const expected = (await apiGet(w, '/api/v1/members?status=at_risk')).data as Array<{ id: string; name: string }>;
    expect(expected.map((m) => m.name)).toEqual(['Listed Member 4']);
    const rows = page.getByTestId('member-row');
    // The filtered page replaces the unfiltered one after the URL changes: wait for it, not for the first paint.
    await expect.poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-member-id'))), { timeout: 20_000 }).toEqual(expected.map((m) => m.id));
    await rows.first().getByRole('link').click();
    await waitForScreen(page);
    expect(await page.getByTestId('member-name').textContent()).toBe('Listed Member 4');
    await context.close();
  });

  it('keeps a chip clicked while the search box is still waiting to send what was typed', async () => {
    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/members`);
    await waitForScreen(page);
    // The search is sent 300 ms after the last key; the chip is clicked before that.
    await page.getByTestId('members-search').fill('Listed');
    await page.getByTestId('status-chip-trial').check();
    await page.waitForURL(/q=Listed/);
    await waitForScreen(page);
    expect(new URL(page.url()).hash).toMatch(/status=trial/);
    expect(await page.getByTestId('status-chip-trial').isChecked()).toBe(true);
    const expected = (await apiGet(w, '/api/v1/members?status=trial&q=Listed')).data as Array<{ id: string; name: string }>;
    expect(expected.map((m) => m.name)).toEqual(['Listed Member 3']);
    expect(await page.getByTestId('member-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-member-id')))).toEqual(expected.map((m) => m.id));
    await context.close();
  });

  it('exports the same CSV the API exports, row for row', async () => {
    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/members`);
    await waitForScreen(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    const saved = fs.readFileSync((await download.path())!, 'utf8');
    const api = await w.t.app.inject({ method: 'GET', url: '/api/v1/members/export.csv', headers: w.creator.headers });
    expect(api.statusCode).toBe(200);
    expect(saved.trim().split('\n')).toEqual(api.body.trim().split('\n'));
    expect(saved.trim().split('\n')).toHaveLength(1 + 6);
    await context.close();
  });

  it('cancels a subscription at the end of its period through a confirmation that says so', async () => {
    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/member/${w.gold.id}`);
    await waitForScreen(page);
    await page.getByTestId('cancel-subscription').first().click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.textContent()).toMatch(/end of the period/i);
    await dialog.getByTestId('cancel-at-period-end').check();
    await dialog.getByTestId('cancel-reason').fill('Moving abroad');
    await dialog.getByRole('button', { name: 'Confirm cancellation' }).click();
    await page.getByTestId('member-notice').waitFor();
    const [subscription] = (await apiGet(w, `/api/v1/subscriptions?tier_id=${w.goldId}`)).data as Array<Record<string, unknown>>;
    expect(subscription).toMatchObject({ status: 'active', cancel_at_period_end: true, cancellation_reason: 'Moving abroad' });
    // The processor holds the same: the mirror took it from the processor's answer.
    const record = json(await w.t.app.inject({ method: 'GET', url: `/api/v1/members/${w.gold.id}`, headers: w.creator.headers })).data;
    expect(record.status).toBe('at_risk');
    await context.close();
  });
});
