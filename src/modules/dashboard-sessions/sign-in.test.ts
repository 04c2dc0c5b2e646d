import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_SERIALIZERS } from '../../app.js';
import { purgeRetained } from '../../retention.js';
import { sha256 } from '../../http/auth.js';
import { buildTestApp, createCreator, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { createSessionsRepo } from './sessions.repo.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const FOURTEEN_DAYS_S = 14 * 86_400;

async function mint(app: TestApp, creator: TestCreator) {
  const res = await app.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers: creator.headers });
  expect(res.statusCode).toBe(201);
  return json(res).data as { url: string; expires_at: string };
}

/** The path and query of a sign-in link, as a browser would request it of this server. */
const pathOf = (url: string) => url.slice(url.indexOf('/dashboard/sign-in'));
const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
const tokenHashOf = (url: string) => sha256(tokenOf(url));

describe('dashboard sign-in links', () => {
  it('gives a full key a one-time link to the dashboard that expires in an hour', async () => {
    const creator = await createCreator(t);
    const before = Date.now();
    const link = await mint(t, creator);
    expect(link.url).toMatch(new RegExp(`^${t.config.publicUrl}/dashboard/sign-in\\?token=tribes_login_[A-Za-z0-9]{40}$`));
    const expires = new Date(link.expires_at).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
  });

  it('refuses a read key with insufficient_scope', async () => {
    const creator = await createCreator(t);
    const key = json(await t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: creator.headers, payload: { name: 'Reports', scope: 'read' } })).data.api_key;
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(403);
    expect(json(res).error.code).toBe('insufficient_scope');
  });

  it('never stores the link with an Idempotency-Key: the replay answers url null', async () => {
    const creator = await createCreator(t);
    const headers = { ...creator.headers, 'idempotency-key': `login-${creator.id}` };
    const first = await t.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers });
    const replay = await t.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers });
    expect(json(first).data.url).toMatch(/token=tribes_login_/);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json(replay).data).toEqual({ url: null, expires_at: json(first).data.expires_at });
  });

  it('signs the browser in with an HttpOnly, SameSite=Strict cookie and sends it to /dashboard/', async () => {
    const creator = await createCreator(t);
    const link = await mint(t, creator);
    const res = await t.app.inject({ method: 'GET', url: pathOf(link.url), headers: { 'user-agent': `Browser/${'x'.repeat(300)}` } });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/dashboard/');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(new RegExp(`^tribes_session=tribes_ses_[A-Za-z0-9]{40}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${FOURTEEN_DAYS_S}$`));
    const listed = json(await t.app.inject({ method: 'GET', url: '/api/v1/dashboard/sessions', headers: creator.headers })).data;
    expect(listed).toHaveLength(1);
    expect(listed[0].user_agent).toHaveLength(200);
  });

  it('marks the cookie Secure when a trusted proxy says the request came over HTTPS', async () => {
    const proxied = await buildTestApp({ database: t.database, config: { trustProxy: true } });
    try {
      const creator = await createCreator(proxied);
      const link = await mint(proxied, creator);
      const res = await proxied.app.inject({ method: 'GET', url: pathOf(link.url), headers: { 'x-forwarded-proto': 'https' } });
      expect(res.statusCode).toBe(303);
      expect(String(res.headers['set-cookie'])).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
    } finally {
      await proxied.app.close();
      await proxied.simulator.close();
    }
  });

  it('answers a link opened a second time with a page saying how to get a new one', async () => {
    const creator = await createCreator(t);
    const link = await mint(t, creator);
    expect((await t.app.inject({ method: 'GET', url: pathOf(link.url) })).statusCode).toBe(303);
    const again = await t.app.inject({ method: 'GET', url: pathOf(link.url) });
    expect(again.statusCode).toBe(400);
    expect(again.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(again.headers['set-cookie']).toBeUndefined();
    expect(again.body).toContain('expired or was already used');
    expect(again.body).toContain('npm run cli -- creators login-link --email');
    expect(again.body).toContain('POST /api/v1/dashboard/login-links');
    expect(again.body).not.toMatch(/<script|src=|href=/);
  });

  it('refuses an expired link, a made-up one and none at all with the same page', async () => {
    const creator = await createCreator(t);
    const link = await mint(t, creator);
    await sql`update dashboard_login_links set expires_at = now() - interval '1 second' where creator_id = ${creator.id}`.execute(t.database.db);
    for (const url of [pathOf(link.url), '/dashboard/sign-in?token=tribes_login_madeup', '/dashboard/sign-in']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('expired or was already used');
    }
  });

  it('opens one session when two requests race with one link', async () => {
    const creator = await createCreator(t);
    const link = await mint(t, creator);
    const answers = await Promise.all([1, 2, 3].map(() => t.app.inject({ method: 'GET', url: pathOf(link.url) })));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([303, 400, 400]);
  });

  it('keeps the token of a sign-in link out of request logs', () => {
    const line = LOG_SERIALIZERS.req({ method: 'GET', url: '/dashboard/sign-in?token=tribes_login_AbC123secret&x=1', host: 'tribes.test', ip: '127.0.0.1' });
    expect(line.url).toBe('/dashboard/sign-in?token=[redacted]&x=1');
  });

  it('purges links a day past their hour and sessions a day after they ended, keeping live ones', async () => {
    const creator = await createCreator(t);
    const link = await mint(t, creator);
    await t.app.inject({ method: 'GET', url: pathOf(link.url) });
    const live = await mint(t, creator);
    await sql`update dashboard_login_links set expires_at = now() - interval '2 days' where creator_id = ${creator.id} and token_hash <> ${tokenHashOf(live.url)}`.execute(t.database.db);
    await sql`update dashboard_sessions set revoked_at = now() - interval '2 days' where creator_id = ${creator.id}`.execute(t.database.db);
    const repo = createSessionsRepo(t.database.db);
    const noop = { purgeProcessed: async () => 0 } as never;
    const purged = await purgeRetained(noop, { purgeExpiredTokens: async () => 0 }, 30, undefined, repo);
    expect(purged.dashboardSessions).toBeGreaterThanOrEqual(2);
    const left = await sql<{ n: string }>`select count(*) as n from dashboard_login_links where creator_id = ${creator.id}`.execute(t.database.db);
    expect(Number(left.rows[0]!.n)).toBe(1);
  });
});
