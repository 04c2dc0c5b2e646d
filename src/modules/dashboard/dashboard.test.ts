import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUDGET_GZIP_BYTES, buildDashboard, type DashboardBuild } from '../../../scripts/build-dashboard.js';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let dir: string;
let built: DashboardBuild;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-dashboard-'));
  built = await buildDashboard(dir);
  t = await buildTestApp({ dashboardDir: dir });
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('the dashboard files', () => {
  it('keep the whole first load, script, styles and page, within 100 KB gzipped', () => {
    expect(built.files.map((f) => path.extname(f.name)).sort()).toEqual(['.css', '.js']);
    expect(built.gzipTotal).toBeLessThanOrEqual(BUDGET_GZIP_BYTES);
  });

  it('are served at /dashboard/ with a policy that lets the page load nothing from another origin', async () => {
    const bare = await get('/dashboard');
    expect(bare.statusCode).toBe(302);
    expect(bare.headers.location).toBe('/dashboard/');
    const page = await get('/dashboard/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'; script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.body).toMatch(/<script type="module" src="assets\/main-[A-Z0-9]+\.js">/);
    expect(page.body).not.toMatch(/https?:\/\//);
  });

  it('send each asset gzipped when the browser accepts it, cached for a year under its content hash', async () => {
    const script = /src="assets\/([^"]+)"/.exec((await get('/dashboard/')).body)![1]!;
    const zipped = await get(`/dashboard/assets/${script}`, { 'accept-encoding': 'gzip, br' });
    expect(zipped.statusCode).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(zipped.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const plain = await get(`/dashboard/assets/${script}`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(zlib.gunzipSync(zipped.rawPayload).equals(plain.rawPayload)).toBe(true);
  });

  it('answer 404 for an asset that is not there, a path outside the folder included', async () => {
    for (const url of ['/dashboard/assets/main-NOPE.js', '/dashboard/assets/..%2F..%2Fpackage.json', '/dashboard/assets/index.html']) {
      expect((await get(url)).statusCode, url).toBe(404);
    }
  });

  it('say how to build them when they are not built', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-no-dashboard-'));
    const bare = await buildTestApp({ dashboardDir: empty });
    try {
      const page = await bare.app.inject({ method: 'GET', url: '/dashboard/' });
      expect(page.statusCode).toBe(503);
      expect(page.body).toContain('npm run build');
    } finally {
      await bare.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
