import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNLIMITED_PATHS } from '../src/http/rate-limit.js';
import { buildTestApp, createCommunity, createCreator, json, type TestApp } from './helpers.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Response {
  $ref?: string;
  headers?: Record<string, unknown>;
}
interface Operation {
  operationId?: string;
  responses: Record<string, Response>;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: { default?: unknown } }>;
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

  it('lists a query parameter with a default as optional, and one without a default as the route needs it', async () => {
    const defaulted = operations.flatMap(([name, op]) => (op.parameters ?? []).filter((p) => p.in === 'query' && p.schema.default !== undefined).map((p) => ({ name, p })));
    expect(defaulted.length).toBeGreaterThan(20);
    expect(defaulted.filter(({ p }) => p.required).map(({ name, p }) => `${name} ${p.name}`)).toEqual([]);
    const creator = await createCreator(t);
    // Left out, the default applies: the document promised as much.
    const page = json(await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: creator.headers }));
    expect(page.pagination).toMatchObject({ page: 1, limit: 20 });
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

describe('input bounds the document declares are enforced', () => {
  const longId = '0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b'.repeat(100);
  const expectRejected = (res: { statusCode: number; body: string }, field: string) => {
    expect(res.statusCode, res.body).toBe(400);
    const body = JSON.parse(res.body);
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('validation_error');
    expect(JSON.stringify(body.error.details ?? [])).toContain(field);
  };

  it('answers 400 with the error envelope for a too-long query value, path id, body string, too many items and a too-big integer', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const headers = creator.headers;
    expectRejected(await t.app.inject({ method: 'GET', url: `/api/v1/members?joined_after=2025-01-01${'0'.repeat(60)}`, headers }), 'joined_after');
    // Up to 100 characters (Fastify's maxParamLength; longer is 414 before routing).
    expectRejected(await t.app.inject({ method: 'GET', url: `/api/v1/tiers/${longId.slice(0, 90)}`, headers }), 'id');
    const tier = { community_id: community.id, name: 'Gold', price_cents: 1000, billing_period: 'monthly' };
    expectRejected(await t.app.inject({ method: 'POST', url: '/api/v1/tiers', headers, payload: { ...tier, name: 'x'.repeat(121) } }), 'name');
    expectRejected(await t.app.inject({ method: 'POST', url: '/api/v1/tiers', headers, payload: { ...tier, community_id: longId } }), 'community_id');
    const benefits = Array.from({ length: 21 }, (_, i) => `Benefit ${i}`);
    expectRejected(await t.app.inject({ method: 'POST', url: '/api/v1/tiers', headers, payload: { ...tier, benefits } }), 'benefits');
    expectRejected(await t.app.inject({ method: 'POST', url: '/api/v1/tiers', headers, payload: { ...tier, price_cents: 100_000_000 } }), 'price_cents');
    const huge = { amount_cents: Number.MAX_SAFE_INTEGER + 2 };
    expectRejected(await t.app.inject({ method: 'POST', url: '/api/v1/payouts/manual', headers, payload: huge }), 'amount_cents');
  });
});
