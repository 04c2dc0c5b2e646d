import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../http/auth.js';
import { buildTestApp, createCreator, createMember, json, uniq, type TestApp } from '../../../test/helpers.js';
import { createMembersRepo } from './members.repo.js';
import { createMembersService } from './members.service.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const signup = (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/member/signup', payload });
// Each login test speaks from its own address so the per-address limit of one test never touches another.
const login = (payload: object, remoteAddress = '192.0.2.1') => t.app.inject({ method: 'POST', url: '/api/v1/member/login', payload, remoteAddress });
const me = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/v1/member/me', headers });
const logout = (headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/api/v1/member/logout', headers });
const newAddress = () => `198.51.100.${Math.floor(Math.random() * 254) + 1}`;

describe('member sign-up and login', () => {
  it('signs up a member, answering the account and a bearer token that opens /me', async () => {
    const email = `Ana.${uniq()}@Example.com`;
    const res = await signup({ name: '  Ana Beatriz Costa ', email, password: 'correct horse battery' });
    expect(res.statusCode, res.body).toBe(201);
    const { member, token, expires_at } = json(res).data;
    expect(member).toEqual({ id: expect.any(String), name: 'Ana Beatriz Costa', email, avatar_url: null, created_at: expect.any(String) });
    expect(token).toMatch(/^tribes_mt_[A-Za-z0-9]{40}$/);
    const days = (Date.parse(expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    const self = await me({ authorization: `Bearer ${token}` });
    expect(self.statusCode).toBe(200);
    expect(json(self).data).toEqual(member);
  });

  it('logs in with the e-mail in any case and the right password, issuing a new token', async () => {
    const member = await createMember(t);
    const res = await login({ email: member.email.toUpperCase(), password: member.password });
    expect(res.statusCode, res.body).toBe(200);
    const { token, member: account } = json(res).data;
    expect(account.id).toBe(member.id);
    expect(token).not.toBe(member.token);
    expect((await me({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
  });

  it('refuses an e-mail already taken, in any case, with 409 email_taken', async () => {
    const member = await createMember(t);
    const res = await signup({ name: 'Copy', email: member.email.toUpperCase(), password: 'another password' });
    expect(res.statusCode).toBe(409);
    expect(json(res).error).toMatchObject({ code: 'email_taken', details: [{ field: 'email', message: 'is already taken' }] });
  });

  it('validates sign-up: password length, e-mail format, blank name and unknown fields are 400', async () => {
    const ok = { name: 'Ana', email: `ana-${uniq()}@example.com`, password: 'long enough pw' };
    const cases: [object, string][] = [
      [{ ...ok, password: 'short' }, 'password'],
      [{ ...ok, password: 'x'.repeat(201) }, 'password'],
      [{ ...ok, email: 'not-an-email' }, 'email'],
      [{ ...ok, name: '   ' }, 'name'],
      [{ ...ok, is_admin: true }, 'is_admin'],
    ];
    for (const [payload, field] of cases) {
      const res = await signup(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
      expect(json(res).error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const short = json(await signup({ ...ok, password: 'short' })).error;
    expect(short.message).toMatch(/password must NOT have fewer than 10 characters/);
  });

  it('answers a wrong password and an unknown e-mail with the same 401', async () => {
    const member = await createMember(t);
    const address = newAddress();
    const wrong = await login({ email: member.email, password: 'not the password' }, address);
    const unknown = await login({ email: `nobody-${uniq()}@example.com`, password: 'not the password' }, address);
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    expect(json(wrong).error).toEqual({ code: 'unauthorized', message: 'Email or password is incorrect.' });
    expect(json(unknown)).toEqual(json(wrong));
  });

  it('stores a salted scrypt hash, never the password, and only the SHA-256 of tokens', async () => {
    const member = await createMember(t);
    const row = await t.database.db.selectFrom('members').select('password_hash').where('id', '=', member.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(row.password_hash).not.toContain(member.password);
    const twin = await createMember(t, { password: member.password });
    const twinRow = await t.database.db.selectFrom('members').select('password_hash').where('id', '=', twin.id).executeTakeFirstOrThrow();
    expect(twinRow.password_hash).not.toBe(row.password_hash);

    const tokens = await t.database.db.selectFrom('member_tokens').selectAll().where('member_id', '=', member.id).execute();
    expect(tokens).toHaveLength(1);
    expect(Buffer.from(tokens[0]!.token_hash).equals(sha256(member.token))).toBe(true);
    expect(JSON.stringify(tokens)).not.toContain(member.token.slice('tribes_mt_'.length));
  });

  it('never stores the token answer under an Idempotency-Key', async () => {
    const key = `signup-${uniq()}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/member/signup',
      headers: { 'idempotency-key': key },
      payload: { name: 'Ana', email: `ana-${uniq()}@example.com`, password: 'long enough pw' },
    });
    expect(res.statusCode).toBe(201);
    const stored = await t.database.db.selectFrom('idempotency_keys').select('key').where('key', '=', key).execute();
    expect(stored).toEqual([]);
  });
});

describe('member tokens', () => {
  it('logout revokes the token used: it is 401 afterwards while the member\'s other tokens still work', async () => {
    const member = await createMember(t);
    const other = json(await login({ email: member.email, password: member.password })).data.token as string;
    const res = await logout(member.headers);
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ success: true, data: { revoked: true } });
    const after = await me(member.headers);
    expect(after.statusCode).toBe(401);
    expect(after.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await logout(member.headers)).statusCode).toBe(401);
    expect((await me({ authorization: `Bearer ${other}` })).statusCode).toBe(200);
  });

  it('refuses an expired token with 401', async () => {
    const member = await createMember(t);
    const repo = createMembersRepo(t.database.db);
    const shortLived = await createMembersService({ db: t.database.db, members: repo, tokenTtlMs: 1 }).issueToken(member.id);
    await new Promise((r) => setTimeout(r, 20));
    const res = await me({ authorization: `Bearer ${shortLived.token}` });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.message).toMatch(/expired or revoked/);
    const longLived = await createMembersService({ db: t.database.db, members: repo }).issueToken(member.id);
    expect((await me({ authorization: `Bearer ${longLived.token}` })).statusCode).toBe(200);
  });

  it('refuses missing, malformed and unknown tokens with 401', async () => {
    for (const authorization of [undefined, 'Bearer tribes_mt_short', `Bearer tribes_mt_${'A'.repeat(40)}`]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/member/me', headers: authorization ? { authorization } : {} });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('never lets a creator key open a member route, nor a member token a creator route', async () => {
    const creator = await createCreator(t);
    const member = await createMember(t);
    const asCreator = await me(creator.headers);
    expect(asCreator.statusCode).toBe(401);
    expect(json(asCreator).error.message).toMatch(/Creator API keys do not open member routes/);
    const asMember = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: member.headers });
    expect(asMember.statusCode).toBe(401);
  });
});

describe('login rate limits', () => {
  it('limits attempts per e-mail, from any address, to 10 per 15 minutes with 429 and Retry-After', async () => {
    const member = await createMember(t);
    for (let i = 0; i < 10; i++) {
      expect((await login({ email: member.email, password: 'wrong password' }, `203.0.113.${i + 1}`)).statusCode).toBe(401);
    }
    // Even the right password waits: the limit is on guessing this account, not on failures.
    const limited = await login({ email: member.email.toUpperCase(), password: member.password }, '203.0.113.99');
    expect(limited.statusCode).toBe(429);
    expect(json(limited).error.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    const someoneElse = await createMember(t);
    expect((await login({ email: someoneElse.email, password: someoneElse.password }, '203.0.113.99')).statusCode).toBe(200);
  });
});
