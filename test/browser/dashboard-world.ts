import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { buildDashboard } from '../../scripts/build-dashboard.js';
import { openCheckout, pay } from '../billing-kit.js';
import { buildTestApp, createCommunity, createCreator, createTier, json, mintMember, type TestApp, type TestCreator, type TestMember } from '../helpers.js';
import { DAY_MS, mirrorSubscription } from '../members-kit.js';
import { launchBrowser } from './browser.js';

/**
 * A started server with the dashboard built, and a creator with something to look at: a
 * community with Bronze and Gold tiers, members who paid through hosted checkout (real
 * subscriptions the processor can cancel and refund), one of them leaving at period end (at
 * risk), and a handful mirrored straight in for a list worth filtering.
 */
export interface DashboardWorld {
  t: TestApp;
  origin: string;
  creator: TestCreator;
  communityId: string;
  bronzeId: string;
  goldId: string;
  /** Paid through checkout: a Bronze member (reads the feed in the member API) and a Gold one. */
  bronze: TestMember;
  gold: TestMember;
  browser: Browser;
  close(): Promise<void>;
}

async function paidMember(t: TestApp, name: string, tierId: string): Promise<TestMember> {
  const member = await mintMember(t, { name });
  const opened = await openCheckout(t, member, tierId);
  expect(opened.statusCode, opened.body).toBe(201);
  expect((await pay(t, json(opened).data.processor_session_id)).status).toBe(200);
  return member;
}

export async function dashboardWorld(): Promise<DashboardWorld> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-dashboard-e2e-'));
  await buildDashboard(dir);
  const t = await buildTestApp({ webhooks: true, dashboardDir: dir });
  const { port } = t.app.server.address() as { port: number };
  const creator = await createCreator(t, { name: 'Coach Ana' });
  const community = await createCommunity(t, creator, { name: 'Strong Mornings' });
  const bronze = await createTier(t, creator, community.id, { name: 'Bronze', price_cents: 1990, level: 1 });
  const gold = await createTier(t, creator, community.id, { name: 'Gold', price_cents: 4990, level: 2 });
  const bronzeMember = await paidMember(t, 'Bruno Bronze', bronze.id);
  const goldMember = await paidMember(t, 'Gabriela Gold', gold.id);
  // Mirrored members (no processor behind them) for the list: active, trialing, leaving (at risk).
  const place = { communityId: community.id, tierId: bronze.id };
  for (const [i, status] of (['active', 'active', 'trialing', 'active'] as const).entries()) {
    const m = await mintMember(t, { name: `Listed Member ${i + 1}` });
    await mirrorSubscription(t, creator, { ...place, memberId: m.id }, { status, createdAt: new Date(Date.now() - (i + 2) * DAY_MS), cancelAtPeriodEnd: i === 3 });
  }
  const browser = await launchBrowser();
  return {
    t,
    origin: `http://127.0.0.1:${port}`,
    creator,
    communityId: community.id,
    bronzeId: bronze.id,
    goldId: gold.id,
    bronze: bronzeMember,
    gold: goldMember,
    browser,
    async close() {
      await browser.close();
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new sign-in link of the creator's (the world's unless told), minted with its API key (DESIGN §8). */
export async function signInLink(w: DashboardWorld, creator: TestCreator = w.creator): Promise<string> {
  const res = await w.t.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers: creator.headers });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data.url as string;
}

/** A browser context signed in through a link (as the world's creator unless told), with a page on the overview. */
export async function signedIn(w: DashboardWorld, viewport = { width: 1280, height: 900 }, creator: TestCreator = w.creator): Promise<{ context: BrowserContext; page: Page }> {
  const context = await w.browser.newContext({ viewport });
  const page = await context.newPage();
  // Links name PUBLIC_URL (the test config's); this server listens on a port of its own.
  const link = new URL(await signInLink(w, creator));
  await page.goto(`${w.origin}${link.pathname}${link.search}`);
  return { context, page };
}

/** The creator API's answer, as the test checks the page against it. */
export async function apiGet(w: DashboardWorld, url: string) {
  const res = await w.t.app.inject({ method: 'GET', url, headers: w.creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res);
}
