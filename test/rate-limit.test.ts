import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { randomBase62 } from '../src/http/auth.js';
import { signupLimitOf } from '../src/http/rate-limit.js';
import { buildTestApp, createCreator, createMember, json, uniq, type TestApp } from './helpers.js';

/**
 * The general limit with a budget of 3 per minute, so tests stay fast. Budgets are per
 * creator, member and address, so the tests share one limited app `t`, each with creators,
 * members and addresses of its own. Those tenants are made through `setup`, an unlimited app
 * on the same database: made through `t`, they would spend the budgets of its admin token and
 * of the address that signs members up. Tests of other limits build apps of their own, on the
 * same database.
 */
let setup: TestApp;
let t: TestApp;
beforeAll(async () => {
  setup = await buildTestApp();
  t = await limited();
});
afterAll(async () => {
  await closeApp(t);
  await setup.close();
});

function limited(rateLimit: Partial<Config['rateLimit']> = {}) {
  return buildTestApp({ database: setup.database, config: { rateLimit: { max: 3, windowMs: 60_000, redisUrl: undefined, signupsPerHour: 1000, ...rateLimit } } });
}

/** Closes an app built on `setup`'s database, leaving the database open for the others. */
async function closeApp(app: TestApp) {
  await app.app.close();
  await app.simulator.close();
}

async function withApp(run: (app: TestApp) => Promise<void>, rateLimit: Partial<Config['rateLimit']>) {
  const app = await limited(rateLimit);
  try {
    await run(app);
  } finally {
    await closeApp(app);
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const madeUpKey = () => `tribes_sk_${randomBase62(40)}`;
const madeUpMemberToken = () => `tribes_mt_${randomBase62(40)}`;
/**
 * An address of the benchmarking range (RFC 2544: 198.18.0.0/15) of its own per call:
 * consecutive from a random start, so tests sharing an app never share a per-address budget
 * and runs sharing a Redis start far apart.
 */
let nextAddress = crypto.randomInt(1 << 17);
const address = () => {
  const n = nextAddress++ % (1 << 17);
  return `198.${18 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;
};

const get = (app: TestApp, url: string, headers: Record<string, string>, remoteAddress = '127.0.0.1') =>
  app.app.inject({ method: 'GET', url, headers, remoteAddress });
const codes = (responses: Array<{ statusCode: number }>) => responses.map((r) => r.statusCode);

describe('rate limiting per verified principal', () => {
  it('answers 429 rate_limited with Retry-After once a creator spends its budget, and another creator keeps its own', async () => {
    const a = await createCreator(setup);
    const b = await createCreator(setup);
    for (let i = 0; i < 3; i++) expect((await get(t, '/api/v1/communities', a.headers)).statusCode).toBe(200);
    const refused = await get(t, '/api/v1/communities', a.headers);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(json(refused)).toMatchObject({ success: false, error: { code: 'rate_limited' } });
    expect((await get(t, '/api/v1/communities', b.headers)).statusCode).toBe(200);
  });

  it("counts a creator's requests per creator, whichever of its keys and addresses they come with", async () => {
    const creator = await createCreator(setup);
    const issued = await setup.app.inject({ method: 'POST', url: `/api/v1/admin/creators/${creator.id}/api-keys`, headers: bearer(setup.adminToken) });
    const secondKey = bearer(json(issued).data.api_key);
    const responses = [
      await get(t, '/api/v1/communities', creator.headers, address()),
      await get(t, '/api/v1/communities', secondKey, address()),
      await get(t, '/api/v1/communities', creator.headers, address()),
      await get(t, '/api/v1/communities', secondKey, address()),
    ];
    expect(codes(responses)).toEqual([200, 200, 200, 429]);
  });

  it("spends one budget for a creator's dashboard session and its API key", async () => {
    const creator = await createCreator(setup);
    const { url } = json(await setup.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers: creator.headers })).data;
    const opened = await setup.app.inject({ method: 'GET', url: url.slice(url.indexOf('/dashboard/sign-in')) });
    const session = { cookie: String(opened.headers['set-cookie']).split(';')[0]! };
    const responses = [
      await get(t, '/api/v1/communities', session, address()),
      await get(t, '/api/v1/communities', creator.headers, address()),
      await get(t, '/api/v1/communities', session, address()),
      await get(t, '/api/v1/communities', creator.headers, address()),
      await get(t, '/api/v1/communities', session, address()),
    ];
    expect(codes(responses)).toEqual([200, 200, 200, 429, 429]);
  });

  it("counts a member's requests per member, across its tokens (each login is a new one) and addresses", async () => {
    const member = await createMember(setup);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/member/login',
      payload: { email: member.email, password: member.password },
      remoteAddress: address(),
    });
    const secondToken = bearer(json(login).data.token);
    const responses = [
      await get(t, '/api/v1/member/me', member.headers, address()),
      await get(t, '/api/v1/member/me', secondToken, address()),
      await get(t, '/api/v1/member/me', member.headers, address()),
      await get(t, '/api/v1/member/me', secondToken, address()),
    ];
    expect(codes(responses)).toEqual([200, 200, 200, 429]);
  });

  it('gives members behind one address a budget each, apart from the budget of unauthenticated requests from it', async () => {
    const shared = address();
    const ana = await createMember(setup);
    const bia = await createMember(setup);
    for (let i = 0; i < 3; i++) expect((await get(t, '/api/v1/discover/communities', {}, shared)).statusCode).toBe(200);
    expect((await get(t, '/api/v1/discover/communities', {}, shared)).statusCode).toBe(429);
    for (const member of [ana, bia]) {
      for (let i = 0; i < 3; i++) expect((await get(t, '/api/v1/member/me', member.headers, shared)).statusCode).toBe(200);
    }
  });
});

describe('requests without a valid credential are counted per address', () => {
  it('counts requests with a different made-up key each against their address, so guessing keys is limited', async () => {
    const guesser = address();
    const guesses = [
      await get(t, '/api/v1/communities', bearer(madeUpKey()), guesser),
      await get(t, '/api/v1/member/me', bearer(madeUpMemberToken()), guesser),
      await get(t, '/api/v1/admin/creators/00000000-0000-4000-8000-000000000000/api-keys', bearer(randomBase62(32)), guesser),
      await get(t, '/api/v1/communities', bearer(madeUpKey()), guesser),
      await get(t, '/api/v1/member/me', bearer(madeUpMemberToken()), guesser),
    ];
    expect(codes(guesses)).toEqual([401, 401, 401, 429, 429]);
    expect(json(guesses[3]!)).toMatchObject({ success: false, error: { code: 'rate_limited' } });
    // Another address guesses on a budget of its own.
    expect((await get(t, '/api/v1/communities', bearer(madeUpKey()), address())).statusCode).toBe(401);
  });

  it('counts made-up session cookies as failed credentials of their address, like made-up keys', async () => {
    const guesser = address();
    const cookie = () => ({ cookie: `tribes_session=tribes_ses_${randomBase62(40)}` });
    const guesses = [
      await get(t, '/api/v1/communities', cookie(), guesser),
      await get(t, '/api/v1/communities', bearer(madeUpKey()), guesser),
      await get(t, '/api/v1/communities', cookie(), guesser),
      await get(t, '/api/v1/communities', cookie(), guesser),
    ];
    expect(codes(guesses)).toEqual([401, 401, 401, 429]);
  });

  it('gives a public route no fresh budget for a made-up bearer token per request', async () => {
    const from = address();
    const responses = [];
    for (let i = 0; i < 5; i++) responses.push(await get(t, '/api/v1/discover/communities', bearer(madeUpKey()), from));
    expect(codes(responses)).toEqual([200, 200, 200, 429, 429]);
  });

  it('limits sign-ups with a made-up bearer token each per address, before any password is hashed', async () => {
    const from = address();
    const responses = [];
    for (let i = 0; i < 5; i++) {
      responses.push(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/member/signup',
          headers: bearer(madeUpMemberToken()),
          payload: { name: 'Ana Costa', email: `ana-${uniq()}@example.com`, password: 'long enough pw' },
          remoteAddress: from,
        }),
      );
    }
    expect(codes(responses)).toEqual([201, 201, 201, 429, 429]);
  });

  it('counts IPv6 clients per /64 network, where a client can take a fresh address for every request', async () => {
    const network = `2001:db8:${crypto.randomInt(0xffff).toString(16)}:7`;
    const responses = [];
    for (const host of ['::1', ':0:0:0:2', ':abcd::3', ':ffff:ffff:ffff:ffff']) {
      responses.push(await get(t, '/api/v1/discover/communities', {}, `${network}${host}`));
    }
    expect(codes(responses)).toEqual([200, 200, 200, 429]);
    expect((await get(t, '/api/v1/discover/communities', {}, `${network.replace(/:7$/, ':8')}::1`)).statusCode).toBe(200);
  });

  it('never limits health, readiness, metrics, the OpenAPI document or the docs page', async () => {
    for (let i = 0; i < 6; i++) {
      for (const url of ['/health', '/ready', '/metrics', '/openapi.json', '/docs']) {
        const res = await get(t, url, i % 2 ? bearer(madeUpKey()) : {});
        expect(res.statusCode, url).toBeLessThan(400);
      }
    }
  });
});

describe('wrong credentials and junk, against tenants of their own', () => {
  it('refuses an address that spent its budget on wrong keys even with a right key until its window ends, so a right guess looks like a wrong one', async () => {
    const creator = await createCreator(setup);
    const guesser = address();
    for (let i = 0; i < 3; i++) expect((await get(t, '/api/v1/communities', bearer(madeUpKey()), guesser)).statusCode).toBe(401);
    const right = await get(t, '/api/v1/communities', creator.headers, guesser);
    expect(right.statusCode).toBe(429);
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(right.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect((await get(t, '/api/v1/communities', creator.headers, address())).statusCode).toBe(200);
  });

  it("cannot evict a creator's counter with junk keys or junk addresses, however many", async () => {
    const creator = await createCreator(setup);
    for (let i = 0; i < 2; i++) expect((await get(t, '/api/v1/communities', creator.headers)).statusCode).toBe(200);
    // More than @fastify/rate-limit's default in-memory store holds (5,000 counters): keys never
    // get a counter of their own, and addresses never share the creators' and members' store.
    const junkFrom = address();
    for (let i = 0; i < 6000; i++) await get(t, '/api/v1/communities', bearer(madeUpKey()), junkFrom);
    for (let i = 0; i < 6000; i++) await get(t, '/api/v1/communities', {}, `10.${i >> 8}.${i & 255}.1`);
    expect(codes([await get(t, '/api/v1/communities', creator.headers), await get(t, '/api/v1/communities', creator.headers)])).toEqual([200, 429]);
  });
});

describe('sign-up limit per address', () => {
  it('limits sign-ups per address per hour, each attempt counting, while a known e-mail still answers 409 within it', () =>
    withApp(
      async (app) => {
        const from = address();
        const signup = (email: string, remoteAddress = from) =>
          app.app.inject({ method: 'POST', url: '/api/v1/member/signup', payload: { name: 'Ana Costa', email, password: 'long enough pw' }, remoteAddress });
        const email = `ana-${uniq()}@example.com`;
        const answers = [await signup(email), await signup(email), await signup(`bia-${uniq()}@example.com`)];
        expect(codes(answers)).toEqual([201, 409, 201]);
        expect(json(answers[1]!).error.code).toBe('email_taken');
        const refused = await signup(`caio-${uniq()}@example.com`);
        expect(refused.statusCode).toBe(429);
        expect(json(refused).error.code).toBe('rate_limited');
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
        expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
        expect((await signup(`caio-${uniq()}@example.com`, address())).statusCode).toBe(201);
      },
      { max: 1000, signupsPerHour: 3 },
    ));

  it("does not count the operator's sign-ups (an import, the demo) per address, while a made-up token still counts", () =>
    withApp(
      async (app) => {
        const from = address();
        const signup = (headers: Record<string, string>) =>
          app.app.inject({ method: 'POST', url: '/api/v1/member/signup', headers, payload: { name: 'Ana Costa', email: `ana-${uniq()}@example.com`, password: 'long enough pw' }, remoteAddress: from });
        const operator = [];
        for (let i = 0; i < 4; i++) operator.push(await signup(bearer(app.adminToken)));
        expect(codes(operator)).toEqual([201, 201, 201, 201]);
        const visitors = [await signup({}), await signup(bearer(randomBase62(40))), await signup({})];
        expect(codes(visitors)).toEqual([201, 201, 429]);
      },
      { max: 1000, signupsPerHour: 2 },
    ));

  it('allows 20 sign-ups per address per hour by default, whatever the general budget; RATE_LIMIT_SIGNUPS_PER_HOUR sets it', async () => {
    const app = await buildTestApp({ database: setup.database, config: { rateLimit: loadConfig({}).rateLimit } });
    try {
      expect(app.app.rateLimits.signupPerAddress).toEqual({ max: 20, windowMs: 3_600_000 });
    } finally {
      await closeApp(app);
    }
    expect(signupLimitOf(loadConfig({ RATE_LIMIT_SIGNUPS_PER_HOUR: '5', RATE_LIMIT_MAX: '6000' }).rateLimit).max).toBe(5);
    expect(signupLimitOf(loadConfig({ RATE_LIMIT_MAX: '60' }).rateLimit).max).toBe(20);
  });
});

const redisUrl = process.env.TEST_REDIS_URL;
describe.runIf(redisUrl)('rate limiting shared through Redis', () => {
  // Every test uses fresh creators and addresses, so counters left in Redis by earlier runs never matter.
  const config = { rateLimit: { max: 4, windowMs: 60_000, redisUrl, signupsPerHour: 1000 } };

  it("spends one creator's budget across two API nodes", async () => {
    const node1 = await buildTestApp({ config });
    // The second node shares the first one's database, as nodes behind a load balancer do.
    const node2 = await buildTestApp({ config, database: node1.database });
    try {
      const creator = await createCreator(node1);
      const list = (t: TestApp) => get(t, '/api/v1/communities', creator.headers, address());
      expect(codes([await list(node1), await list(node2), await list(node1), await list(node2), await list(node1), await list(node2)])).toEqual([
        200, 200, 200, 200, 429, 429,
      ]);
    } finally {
      await node2.app.close();
      await node2.simulator.close();
      await node1.close();
    }
  });

  it('counts made-up keys from one address across nodes; a node that has not seen the budget spent lets one more through', async () => {
    const node1 = await buildTestApp({ config });
    const node2 = await buildTestApp({ config });
    try {
      const guesser = address();
      const guess = (t: TestApp) => get(t, '/api/v1/communities', bearer(madeUpKey()), guesser);
      const answers = [await guess(node1), await guess(node2), await guess(node1), await guess(node2), await guess(node2), await guess(node1), await guess(node1)];
      // The fourth failure is node2's: it sees the budget spent and refuses from then on;
      // node1 learns it from its own next failure.
      expect(codes(answers)).toEqual([401, 401, 401, 401, 429, 401, 429]);
    } finally {
      await node1.close();
      await node2.close();
    }
  });
});
