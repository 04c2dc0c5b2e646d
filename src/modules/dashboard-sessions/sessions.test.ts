import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, json, uniq, type TestApp, type TestCreator } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

/** inject()'s own origin (light-my-request's default Host), which the CSRF check accepts. */
const OWN_ORIGIN = 'http://localhost:80';
const CSRF = { origin: OWN_ORIGIN, 'x-tribes-csrf': '1' };

/** Signs a browser in as the creator: mints a link with the creator's key and opens it. */
async function signIn(creator: TestCreator): Promise<{ cookie: string }> {
  const { url } = json(await t.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers: creator.headers })).data;
  const res = await t.app.inject({ method: 'GET', url: url.slice(url.indexOf('/dashboard/sign-in')) });
  expect(res.statusCode).toBe(303);
  return { cookie: String(res.headers['set-cookie']).split(';')[0]! };
}

const sessionsOf = async (headers: Record<string, string>) => json(await t.app.inject({ method: 'GET', url: '/api/v1/dashboard/sessions', headers })).data;
const createCommunity = (headers: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/api/v1/communities', headers, payload: { name: 'Cookie Club', slug: `cookie-${uniq()}`, category: 'musculacao' } });

describe('dashboard sessions', () => {
  it('reads creator routes with the session cookie alone', async () => {
    const creator = await createCreator(t);
    const session = await signIn(creator);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/creator-metrics', headers: session });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a write made with the cookie without X-Tribes-CSRF, naming what is missing', async () => {
    const creator = await createCreator(t);
    const session = await signIn(creator);
    const res = await createCommunity({ ...session, origin: OWN_ORIGIN });
    expect(res.statusCode).toBe(403);
    expect(json(res).error).toMatchObject({ code: 'csrf_failed' });
    expect(json(res).error.message).toContain('X-Tribes-CSRF: 1');
  });

  it('refuses a write made with the cookie from another origin, or with no Origin at all', async () => {
    const creator = await createCreator(t);
    const session = await signIn(creator);
    const foreign = await createCommunity({ ...session, origin: 'https://evil.example', 'x-tribes-csrf': '1' });
    expect(foreign.statusCode).toBe(403);
    expect(json(foreign).error.message).toContain('another site');
    const none = await createCommunity({ ...session, 'x-tribes-csrf': '1' });
    expect(json(none).error).toMatchObject({ code: 'csrf_failed', message: expect.stringContaining('an Origin header') });
  });

  it('makes a change with the cookie, the CSRF header and an Origin of the server or its public URL', async () => {
    const creator = await createCreator(t);
    const session = await signIn(creator);
    expect((await createCommunity({ ...session, ...CSRF })).statusCode).toBe(201);
    expect((await createCommunity({ ...session, 'x-tribes-csrf': '1', origin: new URL(t.config.publicUrl).origin })).statusCode).toBe(201);
  });

  it('prefers the Authorization header over the cookie, with no CSRF check for a key', async () => {
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const session = await signIn(other);
    const res = await createCommunity({ ...session, ...creator.headers });
    expect(res.statusCode).toBe(201);
    const theirs = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: other.headers });
    expect(json(theirs).pagination.total).toBe(0);
  });

  it('ends a session after 12 hours without use, saying so', async () => {
    const creator = await createCreator(t);
    const session = await signIn(creator);
    await sql`update dashboard_sessions set last_seen_at = now() - interval '12 hours 1 minute' where creator_id = ${creator.id}`.execute(t.database.db);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/creator-metrics', headers: session });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.message).toContain('expired after 12 hours without use: open a new sign-in link');
    expect(await sessionsOf(creator.headers)).toEqual([]);
  });

  it('ends a session 14 days after sign-in however much it is used', async () => {
    const creator = await createCreator(t);
    const session = await signIn(creator);
    await sql`update dashboard_sessions set expires_at = now() - interval '1 second' where creator_id = ${creator.id}`.execute(t.database.db);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/creator-metrics', headers: session });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.message).toContain('14 days');
  });

  it('refuses a made-up or malformed cookie with 401', async () => {
    for (const cookie of ['tribes_session=tribes_ses_' + 'A'.repeat(40), 'tribes_session=nonsense']) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/creator-metrics', headers: { cookie } });
      expect(res.statusCode).toBe(401);
    }
  });

  it('lists live sessions newest first, marking the one making the request as current', async () => {
    const creator = await createCreator(t);
    const first = await signIn(creator);
    const second = await signIn(creator);
    const seen = await sessionsOf(second);
    expect(seen).toHaveLength(2);
    expect(seen.map((s: { current: boolean }) => s.current)).toEqual([true, false]);
    expect(seen[0]).toMatchObject({ revoked_at: null, user_agent: 'lightMyRequest' });
    expect(new Date(seen[0].idle_expires_at).getTime() - new Date(seen[0].last_seen_at).getTime()).toBe(12 * 3600_000);
    expect((await sessionsOf(first)).map((s: { current: boolean }) => s.current)).toEqual([false, true]);
    expect((await sessionsOf(creator.headers)).every((s: { current: boolean }) => !s.current)).toBe(true);
  });

  it('signs out a session: its next request is 401, and signing out the current one clears the cookie', async () => {
    const creator = await createCreator(t);
    const session = await signIn(creator);
    const [mine] = await sessionsOf(session);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/dashboard/sessions/${mine.id}`, headers: { ...session, ...CSRF } });
    expect(res.statusCode).toBe(200);
    expect(json(res).data).toMatchObject({ id: mine.id, current: true, revoked_at: expect.any(String) });
    expect(res.headers['set-cookie']).toBe('tribes_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/creator-metrics', headers: session })).statusCode).toBe(401);
    const again = await t.app.inject({ method: 'DELETE', url: `/api/v1/dashboard/sessions/${mine.id}`, headers: creator.headers });
    expect(json(again).data.revoked_at).toBe(json(res).data.revoked_at);
    expect(again.headers['set-cookie']).toBeUndefined();
  });

  it("answers 404 for another creator's session, leaving it working", async () => {
    const owner = await createCreator(t);
    const intruder = await createCreator(t);
    const session = await signIn(owner);
    const [theirs] = await sessionsOf(session);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/dashboard/sessions/${theirs.id}`, headers: intruder.headers });
    expect(res.statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/creator-metrics', headers: session })).statusCode).toBe(200);
  });

  it('cannot create or revoke API keys or mint sign-in links, but can list keys', async () => {
    const creator = await createCreator(t);
    const session = await signIn(creator);
    const headers = { ...session, ...CSRF };
    const attempts = [
      await t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'From a cookie', scope: 'full' } }),
      await t.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${creator.apiKeyId}`, headers }),
      await t.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers }),
    ];
    for (const res of attempts) {
      expect(res.statusCode).toBe(403);
      expect(json(res).error).toMatchObject({ code: 'session_not_allowed', message: expect.stringContaining('a dashboard session cannot create or revoke credentials') });
    }
    const keys = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: session });
    expect(json(keys).data.map((k: { id: string }) => k.id)).toEqual([creator.apiKeyId]);
  });
});

describe('operator sign-in links', () => {
  const admin = () => ({ authorization: `Bearer ${t.adminToken}` });

  it("mints a link for the creator with an e-mail, whatever its case, that signs that creator in", async () => {
    const creator = await createCreator(t);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/login-links', headers: admin(), payload: { email: creator.email.toUpperCase() } });
    expect(res.statusCode).toBe(201);
    const data = json(res).data;
    expect(data).toMatchObject({ creator_id: creator.id, url: expect.stringContaining('/dashboard/sign-in?token=tribes_login_') });
    const opened = await t.app.inject({ method: 'GET', url: data.url.slice(data.url.indexOf('/dashboard/sign-in')) });
    const cookie = String(opened.headers['set-cookie']).split(';')[0]!;
    expect((await sessionsOf({ cookie }))[0]).toMatchObject({ current: true });
    expect((await sessionsOf(creator.headers))).toHaveLength(1);
  });

  it('answers 404 for an e-mail no creator has, and 401 for a creator key', async () => {
    const creator = await createCreator(t);
    const unknown = await t.app.inject({ method: 'POST', url: '/api/v1/admin/login-links', headers: admin(), payload: { email: `nobody-${creator.id}@example.com` } });
    expect(unknown.statusCode).toBe(404);
    const asCreator = await t.app.inject({ method: 'POST', url: '/api/v1/admin/login-links', headers: creator.headers, payload: { email: creator.email } });
    expect(asCreator.statusCode).toBe(401);
  });
});
