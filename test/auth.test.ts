import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, json, type TestApp } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const list = (authorization?: string) =>
  t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: authorization === undefined ? {} : { authorization } });

describe('creator API keys', () => {
  it('answers 401 with WWW-Authenticate: Bearer for a missing, malformed, unknown or non-Bearer key', async () => {
    const cases = [
      undefined,
      'Bearer',
      'Basic dXNlcjpwYXNz',
      'Bearer tribes_sk_short',
      'Bearer sk_test_12345678901234567890123456789012',
      `Bearer tribes_sk_${'A'.repeat(40)}`,
    ];
    for (const header of cases) {
      const res = await list(header);
      expect(res.statusCode, String(header)).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(json(res)).toMatchObject({ success: false, error: { code: 'unauthorized', message: expect.any(String) } });
    }
  });

  it('accepts the scheme in any case', async () => {
    const creator = await createCreator(t);
    expect((await list(`bearer ${creator.apiKey}`)).statusCode).toBe(200);
  });

  it('checks the key before validating the request, so a stranger learns nothing about the API', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/communities', payload: { nonsense: true } });
    expect(res.statusCode).toBe(401);
  });
});
