import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers.js';
import { browserSkipReason, browserSuite, launchBrowser, watch } from './browser.js';

/**
 * The API reference in a real browser (DESIGN §3: served offline, no CDN): it draws every
 * operation of the document, asks nothing of any other origin, and logs no error.
 */
describe.skipIf(browserSkipReason !== undefined)(`the docs page in Chromium${browserSkipReason ? ` (skipped: ${browserSkipReason})` : ''}`, browserSuite, () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  beforeAll(async () => {
    t = await buildTestApp({ webhooks: true });
    const { port } = t.app.server.address() as { port: number };
    origin = `http://127.0.0.1:${port}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('draws every operation of the document from the server alone, without an error', async () => {
    const page = await browser.newPage();
    const seen = watch(page);
    const response = await page.goto(`${origin}/docs`, { waitUntil: 'networkidle' });
    expect(response?.status()).toBe(200);
    const doc = t.app.swagger() as { paths: Record<string, Record<string, unknown>>; webhooks?: Record<string, Record<string, unknown>> };
    // Swagger UI draws the outgoing events of the `webhooks` section as operations too.
    const operations = [...Object.values(doc.paths), ...Object.values(doc.webhooks ?? {})].reduce(
      (n, ops) => n + Object.keys(ops).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).length,
      0,
    );
    // Swagger UI draws ~250 operations from a 1.5 MB bundle: ~2.5 s here even with both cores
    // busy, but a loaded CI machine once took longer than 15 s. Wait generously, and if it never
    // draws, say what the page showed instead of only "timeout".
    await page.waitForSelector('.opblock', { timeout: 60_000 }).catch(async (error: unknown) => {
      const shown = (await page.locator('body').innerText().catch(() => '')).slice(0, 500);
      throw new Error(`no operation drawn (${String(error)}); errors: ${JSON.stringify(seen.errors)}; requests: ${JSON.stringify(seen.requests)}; page: ${shown}`);
    });
    expect(await page.locator('.opblock').count()).toBe(operations);
    expect(seen.requests.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
    expect(seen.errors).toEqual([]);
    await page.close();
  });
});
