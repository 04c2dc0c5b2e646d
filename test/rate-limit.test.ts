import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, json, type TestApp } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ config: { rateLimit: { max: 3, windowMs: 60_000, redisUrl: undefined } } });
});
afterAll(() => t.close());

describe('rate limiting', () => {
  it('answers 429 rate_limited with Retry-After once a key spends its budget, per key', async () => {
    // Creating creators goes through the admin token's own budget.
    const a = await createCreator(t);
    const b = await createCreator(t);
    const get = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/v1/communities', headers });
    for (let i = 0; i < 3; i++) expect((await get(a.headers)).statusCode).toBe(200);
    const limited = await get(a.headers);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(json(limited)).toMatchObject({ success: false, error: { code: 'rate_limited' } });
    expect((await get(b.headers)).statusCode).toBe(200);
  });

  it('counts requests with unknown keys too, so keys cannot be guessed at full speed', async () => {
    const guess = { authorization: `Bearer tribes_sk_${'G'.repeat(40)}` };
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: guess })).statusCode);
    expect(codes).toEqual([401, 401, 401, 429]);
  });

  it('never limits health, readiness or metrics', async () => {
    for (let i = 0; i < 6; i++) {
      expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    }
  });
});

const redisUrl = process.env.TEST_REDIS_URL;
describe.runIf(redisUrl)('rate limiting shared through Redis', () => {
  it('spends one budget across two API nodes', async () => {
    const config = { rateLimit: { max: 4, windowMs: 60_000, redisUrl } };
    const node1 = await buildTestApp({ config });
    const node2 = await buildTestApp({ config, database: undefined });
    try {
      const creator = await createCreator(node1);
      const get = (t: TestApp) => t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: creator.headers });
      // node2 has its own database copy on PGlite, so the key is unknown there (401) — still counted.
      const codes = [await get(node1), await get(node2), await get(node1), await get(node2), await get(node1)].map((r) => r.statusCode);
      expect(codes.slice(0, 4).every((c) => c !== 429)).toBe(true);
      expect(codes[4]).toBe(429);
    } finally {
      await node1.close();
      await node2.close();
    }
  });
});
