import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { launchBrowser } from '../test/browser/browser.js';
import { axeViolations, horizontalOverflow, SCREEN_PATHS, waitForScreen } from '../test/browser/dashboard-pages.js';

/**
 * npm run screenshots: a PNG of every dashboard screen, drawn by Chromium from a running
 * server (after `npm run demo`), into docs/screenshots/ (desktop, and 375 px wide with
 * --mobile). Each screen is also checked at 375 px: sideways scroll and axe-core's serious or
 * critical violations are reported, and fail the run with --check.
 *
 * Signs in with --link (a sign-in link) or --key (a creator API key, which mints one).
 * Options: --url (default TRIBES_URL or http://127.0.0.1:3000), --out DIR, --only a,b, --member ID (also draws that member's page).
 */
const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    link: { type: 'string' },
    key: { type: 'string' },
    out: { type: 'string' },
    only: { type: 'string' },
    member: { type: 'string' },
    mobile: { type: 'boolean' },
    check: { type: 'boolean' },
  },
});
const base = (values.url ?? process.env.TRIBES_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
const out = path.resolve(values.out ?? 'docs/screenshots');

async function signInLink(): Promise<string> {
  if (values.link) return values.link;
  const key = values.key;
  if (!key) throw new Error('Pass --link SIGN_IN_URL or --key API_KEY (npm run demo prints both).');
  const res = await fetch(`${base}/api/v1/dashboard/login-links`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { data?: { url: string }; error?: { message: string } };
  if (!res.ok || !body.data) throw new Error(`Could not mint a sign-in link: ${body.error?.message ?? res.status}`);
  return body.data.url;
}

const screens: string[] = values.only ? values.only.split(',') : [...SCREEN_PATHS];
if (values.member) screens.push(`member/${values.member}`);
fs.mkdirSync(out, { recursive: true });
const browser = await launchBrowser();
let problems = 0;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(await signInLink());
  for (const screen of screens) {
    const name = screen.replace(/\/.*/, '-page');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base}/dashboard/#/${screen}`);
    await waitForScreen(page);
    await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    await page.waitForTimeout(200);
    if (values.mobile) await page.screenshot({ path: path.join(out, `${name}-375.png`), fullPage: true });
    const overflow = await horizontalOverflow(page);
    const violations = await axeViolations(page);
    if (overflow > 0) console.log(`${screen}: ${overflow}px wider than a 375 px screen`);
    for (const v of violations) console.log(`${screen}: axe ${v.impact} ${v.id} (${v.help}) at ${v.targets.join(', ')}`);
    problems += (overflow > 0 ? 1 : 0) + violations.length;
    console.log(`${screen}: drawn${overflow === 0 && violations.length === 0 ? ', 375 px and axe clean' : ''}`);
  }
} finally {
  await browser.close();
}
console.log(`screenshots in ${path.relative(process.cwd(), out) || '.'}`);
if (values.check && problems > 0) process.exit(1);
