import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNLIMITED_PATHS } from '../src/http/rate-limit.js';
import { buildTestApp, createCreator, json, type TestApp } from './helpers.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Response {
  $ref?: string;
  headers?: Record<string, unknown>;
}
interface Operation {
  operationId?: string;
  responses: Record<string, Response>;
}

let t: TestApp;
let operations: [string, Operation][];
let components: { headers: Record<string, unknown>; responses: Record<string, Response> };
beforeAll(async () => {
  t = await buildTestApp();
  const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  components = doc.components;
  operations = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m): [string, Operation] => [`${m.toUpperCase()} ${path}`, item[m]!]),
  );
});
afterAll(() => t.close());

describe('the OpenAPI document', () => {
  it('names every operation with its own readable operationId', () => {
    expect(operations.length).toBeGreaterThan(80);
    const missing = operations.filter(([, op]) => !op.operationId).map(([name]) => name);
    expect(missing).toEqual([]);
    const ids = operations.map(([, op]) => op.operationId!);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
  });

  it('declares the rate-limit headers the server sends on every answer of a counted route, and the shared 429 and 500', async () => {
    const resolve = (r: Response) => (r.$ref ? components.responses[r.$ref.split('/').pop()!]! : r);
    for (const [name, op] of operations) {
      const limited = !UNLIMITED_PATHS.has(name.split(' ')[1]!);
      expect(op.responses, name).toHaveProperty('500');
      if (!limited) continue;
      expect(op.responses, name).toHaveProperty('429');
      expect(Object.keys(resolve(op.responses['429']!).headers ?? {}), name).toContain('Retry-After');
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^[24]/.test(status)) continue;
        expect(Object.keys(resolve(response).headers ?? {}), `${name} ${status}`).toEqual(
          expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
        );
      }
    }
    const creator = await createCreator(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: creator.headers });
    expect(res.statusCode).toBe(200);
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(Number(res.headers[header])).toBeGreaterThanOrEqual(0);
  });
});
