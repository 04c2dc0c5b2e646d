import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildTestApp, createCreator, type TestApp } from './helpers.js';

const PAGE = 'https://tribe.example';

const preflight = (t: TestApp, url: string, origin = PAGE) =>
  t.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' },
  });

describe('CORS off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('sends no CORS header and answers a preflight 404, as before the setting existed', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/discover/communities', headers: { origin: PAGE } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await preflight(t, '/api/v1/member/login');
    expect(pre.statusCode).toBe(404);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS_ORIGINS listing origins', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ config: { cors: { origins: [PAGE, 'http://localhost:5173'], creatorApi: false } } });
  });
  afterAll(() => t.close());

  it('lets a listed origin read discovery, echoing that origin and varying on it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/discover/communities', headers: { origin: PAGE } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(PAGE);
    expect(String(res.headers.vary)).toMatch(/origin/i);
    expect(String(res.headers['access-control-expose-headers'])).toMatch(/X-Request-Id/);
    expect(String(res.headers['access-control-expose-headers'])).toMatch(/Retry-After/);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers a member API preflight with the methods and headers a browser app needs, before auth and uncounted', async () => {
    const res = await preflight(t, '/api/v1/member/workout-logs', 'http://localhost:5173');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(String(res.headers['access-control-allow-methods'])).toContain('POST');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('idempotency-key');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
  });

  it('gives an origin that is not listed no CORS header, so its page cannot read the answer', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/discover/communities', headers: { origin: 'https://evil.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('keeps the creator API closed to other origins unless CORS_CREATOR_API is set', async () => {
    const creator = await createCreator(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: { ...creator.headers, origin: PAGE } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect((await preflight(t, '/api/v1/communities')).statusCode).toBe(404);
  });
});

describe('CORS_ORIGINS=* with the creator API open', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ config: { cors: { origins: ['*'], creatorApi: true } } });
  });
  afterAll(() => t.close());

  it('answers any origin with * and never allows credentials with the wildcard', async () => {
    const creator = await createCreator(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: { ...creator.headers, origin: 'https://anyone.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    const unauthorized = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: { origin: 'https://anyone.example' } });
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers['access-control-allow-origin']).toBe('*');
  });

  it('never opens the operator API or the processor webhook to another origin', async () => {
    const admin = await t.app.inject({ method: 'GET', url: '/api/v1/admin/webhook-events', headers: { authorization: `Bearer ${t.adminToken}`, origin: PAGE } });
    expect(admin.statusCode).toBe(200);
    expect(admin.headers['access-control-allow-origin']).toBeUndefined();
    expect((await preflight(t, '/api/v1/admin/creators')).statusCode).toBe(404);
    expect((await preflight(t, '/api/v1/webhooks/processor')).statusCode).toBe(404);
  });
});

describe('the CORS settings', () => {
  it('read CORS_ORIGINS and CORS_CREATOR_API, off by default', () => {
    expect(loadConfig({}).cors).toEqual({ origins: [], creatorApi: false });
    expect(loadConfig({ CORS_ORIGINS: ' https://a.example , http://localhost:5173 ', CORS_CREATOR_API: 'true' }).cors).toEqual({
      origins: ['https://a.example', 'http://localhost:5173'],
      creatorApi: true,
    });
    expect(loadConfig({ CORS_ORIGINS: '*' }).cors.origins).toEqual(['*']);
  });

  it('refuse an origin with a path or trailing slash, a wildcard mixed with origins, and a creator switch that is not a boolean', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'https://a.example/' })).toThrow(/no path or trailing slash/);
    expect(() => loadConfig({ CORS_ORIGINS: 'a.example' })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ CORS_ORIGINS: '*,https://a.example' })).toThrow(/not both/);
    expect(() => loadConfig({ CORS_CREATOR_API: 'yes' })).toThrow(/CORS_CREATOR_API/);
  });
});
