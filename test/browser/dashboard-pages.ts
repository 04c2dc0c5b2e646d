import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * What the dashboard's browser tests, `npm run screenshots` and `npm run bench:dashboard`
 * share: the screens to visit, how to know one is drawn, and the checks a person relies on
 * (axe-core's serious and critical violations; no sideways scroll).
 */
export const SCREEN_PATHS = ['overview', 'members', 'retention', 'communities', 'training', 'feed', 'money', 'webhooks', 'settings'] as const;

/** Drawn: the app booted, nothing is loading, the network is quiet. */
export async function waitForScreen(page: Page, timeout = 30_000): Promise<void> {
  await page.waitForSelector('main#main h1', { timeout });
  await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout });
  await page.waitForLoadState('networkidle', { timeout });
}

// Evaluated through the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** How many CSS pixels the page is wider than its viewport (0: no sideways scroll). */
export const horizontalOverflow = (page: Page): Promise<number> =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
