/**
 * npm run bench:dashboard: how long the dashboard's overview of the demo creator takes to be
 * fully drawn in Chromium (issue #29: within 1 s of navigation on this machine).
 *
 *   npm run bench:dashboard                      # builds, starts its own server (PGlite, simulator), runs the demo, measures
 *   TRIBES_URL=http://127.0.0.1:3000 TRIBES_KEY=tribes_sk_... npm run bench:dashboard   # against a running server and creator
 *   BENCH_RUNS=20 (default)
 *
 * "Fully drawn" is measured in the page: from navigation start (performance.now() = 0) to the
 * first frame where every figure, the account card, the three charts and the tier mix are in
 * the page and nothing is loading. Two kinds of navigation, BENCH_RUNS each:
 *   cold  a new browser context (empty HTTP cache, the session cookie carried over): a first visit
 *   warm  a reload in the same context (the hashed assets come from the cache, as on a return visit)
 * Prints median, p90 and max per kind, and one JSON document on stdout.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../test/browser/browser.js';
import { env, int, runBench } from './knobs.js';

const runs = int('BENCH_RUNS', 20);
const GOAL_MS = 1000;

async function waitForReady(url: string) {
  for (let i = 0; i < 240; i++) {
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`no server became ready at ${url}`);
}

/** The real server as npm start runs it, on a fresh embedded database, and the demo creator in it. */
async function ownServer(): Promise<{ url: string; key: string; server: ChildProcess; dataDir: string }> {
  const built = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-bench-dashboard-'));
  const port = int('BENCH_PORT', 3290);
  const processEnv = { ...env, PORT: String(port), PROCESSOR_SIM_PORT: String(port + 1), DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '100000' };
  const server = spawn('node', ['dist/server.mjs'], { stdio: ['ignore', 'ignore', 'inherit'], env: processEnv });
  const url = `http://127.0.0.1:${port}`;
  await waitForReady(`${url}/ready`);
  console.error('running the demo (about half a minute)…');
  const demo = spawnSync('npx', ['tsx', 'scripts/demo.ts', '--env', '--seed', '7'], {
    env: { ...processEnv, TRIBES_URL: url, PROCESSOR_SIM_URL: `http://127.0.0.1:${port + 1}` },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const key = /TRIBES_KEY='([^']+)'/.exec(demo.stdout ?? '')?.[1];
  if (demo.status !== 0 || !key) throw new Error('the demo failed');
  return { url, key, server, dataDir };
}

async function signInLink(url: string, key: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/dashboard/login-links`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { data?: { url: string } };
  if (!body.data) throw new Error(`could not mint a sign-in link (${res.status})`);
  const link = new URL(body.data.url);
  return `${url}${link.pathname}${link.search}`;
}

/** Milliseconds from navigation start to the first frame with the whole overview drawn. */
async function drawnAt(page: Page): Promise<number> {
  const handle = await page.waitForFunction(
    () => {
      const drawn =
        document.querySelectorAll('.loading').length === 0 &&
        document.querySelectorAll('.stat').length >= 6 &&
        document.querySelectorAll('.chart canvas').length >= 3 &&
        document.querySelector('.account') !== null &&
        document.querySelector('[aria-label="Tier mix"] tbody tr') !== null;
      return drawn ? performance.now() : false;
    },
    undefined,
    { polling: 'raf', timeout: 30_000 },
  );
  return (await handle.jsonValue()) as number;
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median: Math.round(at(0.5)), p90: Math.round(at(0.9)), max: Math.round(s[s.length - 1]!) };
};

runBench(async () => {
  const own = env.TRIBES_URL && env.TRIBES_KEY ? undefined : await ownServer();
  const url = (env.TRIBES_URL ?? own!.url).replace(/\/+$/, '');
  const key = env.TRIBES_KEY ?? own!.key;
  const browser = await launchBrowser();
  try {
    const first = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await first.newPage();
    await page.goto(await signInLink(url, key));
    await drawnAt(page);
    const storageState = await first.storageState();
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < runs; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, storageState });
      const fresh = await context.newPage();
      await fresh.goto(`${url}/dashboard/#/overview`);
      cold.push(await drawnAt(fresh));
      await fresh.reload();
      warm.push(await drawnAt(fresh));
      await context.close();
    }
    const result = { runs, goal_ms: GOAL_MS, cold: stats(cold), warm: stats(warm) };
    console.error(`overview fully drawn, ms from navigation: cold median ${result.cold.median} (p90 ${result.cold.p90}, max ${result.cold.max}); warm median ${result.warm.median} (p90 ${result.warm.p90}, max ${result.warm.max}); goal ${GOAL_MS}`);
    console.log(JSON.stringify(result));
  } finally {
    await browser.close();
    if (own) {
      own.server.kill('SIGTERM');
      await new Promise((r) => own.server.once('exit', r));
      fs.rmSync(own.dataDir, { recursive: true, force: true });
    }
  }
});
