import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createMember, json, openTestDatabase, uniq, type TestApp } from '../../../test/helpers.js';
import { createMembersRepo } from './members.repo.js';
import { memberPublicRoutes } from './members.routes.js';
import { createMembersService } from './members.service.js';

/**
 * The per-address login limit, proven with small limits so the test stays fast: the same
 * routes are mounted a second time, under /limited, with limits passed as options.
 */
let t: TestApp;
beforeAll(async () => {
  const database = await openTestDatabase();
  const service = createMembersService({ db: database.db, members: createMembersRepo(database.db) });
  t = await buildTestApp({
    database,
    beforeReady: (app) =>
      void app.register(
        memberPublicRoutes(service, { loginLimits: { perEmail: { max: 2, windowMs: 60_000 }, perIp: { max: 3, windowMs: 60_000 } } }),
        { prefix: '/limited/member' },
      ),
  });
});
afterAll(() => t.close());

const login = (payload: object, remoteAddress: string) =>
  t.app.inject({ method: 'POST', url: '/limited/member/login', payload, remoteAddress });

describe('login limits as options', () => {
  it('limits attempts per address over any e-mails', async () => {
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await login({ email: `nobody-${uniq()}@example.com`, password: 'whatever pw' }, '192.0.2.50')).statusCode);
    expect(codes).toEqual([401, 401, 401, 429]);
    const member = await createMember(t);
    expect((await login({ email: member.email, password: member.password }, '192.0.2.51')).statusCode).toBe(200);
  });

  it('limits attempts per e-mail over any addresses', async () => {
    const member = await createMember(t);
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await login({ email: member.email, password: 'wrong password' }, `192.0.2.${60 + i}`)).statusCode);
    expect(codes).toEqual([401, 401, 429]);
    const limited = await login({ email: member.email, password: member.password }, '192.0.2.70');
    expect(limited.statusCode).toBe(429);
    expect(json(limited)).toMatchObject({ success: false, error: { code: 'rate_limited' } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
  });
});
