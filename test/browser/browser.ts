import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * A real browser for tests: Debian's `chromium` package driven by playwright-core (Playwright's
 * own browser download cannot be reached from here, and CI must not depend on a CDN).
 * `.ci/run` installs the package when it is missing and sets BROWSER_TESTS=required, so there
 * a missing browser fails the run; on a machine without it (a fresh clone with only Node and
 * npm) the browser tests are skipped and say why.
 */
const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'].filter(
  (p): p is string => typeof p === 'string' && p.length > 0,
);

export const chromiumPath: string | undefined = CANDIDATES.find((p) => fs.existsSync(p));

if (!chromiumPath && process.env.BROWSER_TESTS === 'required') {
  throw new Error(`BROWSER_TESTS=required but no chromium at ${CANDIDATES.join(', ')}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`);
}

export const browserSkipReason = chromiumPath ? undefined : 'no chromium on this machine (apt-get install chromium, or set CHROMIUM_PATH); CI installs it';

/**
 * Each browser test's budget. A loaded CI machine (two test files at once on two cores, beside
 * Chromium and PostgreSQL) has drawn a page three to five times slower than an idle one; a
 * budget that only holds on an idle machine turns red CI into noise. Waits inside a test end
 * as soon as what they wait for is there, so a generous budget costs a passing run nothing.
 */
export const browserSuite = { timeout: 90_000 };

export async function launchBrowser(): Promise<Browser> {
  if (!chromiumPath) throw new Error(`No chromium found (${browserSkipReason}).`);
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Every URL the page asked for, and every console error and uncaught exception it had. */
export function watch(page: Page) {
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return { requests, errors };
}
