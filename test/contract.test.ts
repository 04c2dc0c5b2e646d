import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractOf, type Contract } from './contract.js';
import { buildTestApp, createCreator, type TestApp } from './helpers.js';

let t: TestApp;
let contract: Contract;
beforeAll(async () => {
  t = await buildTestApp();
  contract = await contractOf(t.app);
});
afterAll(() => t.close());

/** A real answer with one part changed, as a server that broke its document would send it. */
const altered = (res: LightMyRequestResponse, change: { statusCode?: number; headers?: Record<string, string>; body?: unknown }): LightMyRequestResponse => {
  const body = change.body === undefined ? res.body : JSON.stringify(change.body);
  return {
    ...res,
    statusCode: change.statusCode ?? res.statusCode,
    headers: { ...res.headers, ...change.headers },
    body,
    rawPayload: Buffer.from(body),
    json: () => JSON.parse(body),
  } as LightMyRequestResponse;
};

describe('the contract check every test answer goes through', () => {
  it('passes the answers the server really sends', async () => {
    const creator = await createCreator(t);
    const request = { method: 'GET' as const, url: '/api/v1/communities?limit=5', headers: creator.headers };
    const res = await t.app.inject(request);
    expect(() => contract.check(request, res)).not.toThrow();
  });

  it('fails an answer whose status, header or body the document does not declare', async () => {
    const creator = await createCreator(t);
    const request = { method: 'GET' as const, url: '/api/v1/communities', headers: creator.headers };
    const res = await t.app.inject(request);
    expect(() => contract.check(request, altered(res, { statusCode: 418 }))).toThrow(/status 418 is not declared for listCommunities/);
    expect(() => contract.check(request, altered(res, { body: { success: true, data: 'not a list' } }))).toThrow(/body\/data must be array/);
    expect(() => contract.check(request, altered(res, { headers: { 'content-type': 'text/html' } }))).toThrow(/content type text\/html/);
    const unauthorized = await t.app.inject({ method: 'GET', url: '/api/v1/communities' });
    expect(() => contract.check(request, altered(unauthorized, { headers: { 'www-authenticate': 'Bearer realm="tribes"' } }))).toThrow(/www-authenticate must be equal to constant/);
  });

  it('holds an unknown path to the error envelope', async () => {
    const request = { method: 'GET' as const, url: '/api/v1/nothing-here' };
    const res = await t.app.inject(request);
    expect(res.statusCode).toBe(404);
    expect(() => contract.check(request, altered(res, { body: { message: 'not found' } }))).toThrow(/not the error envelope/);
  });
});
