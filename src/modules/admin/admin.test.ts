import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveAdminToken } from '../../http/admin-token.js';
import { sha256 } from '../../http/auth.js';
import { buildTestApp, createCreator, json, uniq, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const admin = () => ({ authorization: `Bearer ${t.adminToken}` });

describe('admin API', () => {
  it('creates a creator and answers {creator, api_key} with a tribes_sk_ key shown once', async () => {
    const email = `Maria.${uniq()}@Example.com`;
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/creators', headers: admin(), payload: { name: 'Maria Silva', email } });
    expect(res.statusCode).toBe(201);
    const data = json(res).data;
    expect(data.creator).toMatchObject({ name: 'Maria Silva', email, processor_account_id: expect.stringMatching(/^acct_/) });
    expect(data.api_key).toMatch(/^tribes_sk_[A-Za-z0-9]{40}$/);
    const stored = await t.database.db.selectFrom('api_keys').selectAll().where('creator_id', '=', data.creator.id).execute();
    expect(stored).toHaveLength(1);
    expect(Buffer.from(stored[0]!.key_hash).equals(sha256(data.api_key))).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(data.api_key.slice(10));
    expect(data.api_key.startsWith(stored[0]!.prefix)).toBe(true);
  });

  it('answers 409 email_taken for an e-mail already used, whatever its case', async () => {
    const email = `dup-${uniq()}@example.com`;
    await createCreator(t, { email });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/creators', headers: admin(), payload: { name: 'Other', email: email.toUpperCase() } });
    expect(res.statusCode).toBe(409);
    expect(json(res).error.code).toBe('email_taken');
  });

  it('validates the creator body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/creators', headers: admin(), payload: { name: ' ', email: 'not-an-email', plan: 'pro' } });
    expect(res.statusCode).toBe(400);
    const fields = json(res).error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'email', 'plan']));
  });

  it('refuses the admin API without the admin token, and with a creator key', async () => {
    const creator = await createCreator(t);
    for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token-wrong' }, creator.headers]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/creators', headers, payload: { name: 'X', email: `x-${uniq()}@example.com` } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('issues extra keys that work alongside the first, and revokes one effective on the next request', async () => {
    const creator = await createCreator(t);
    const issued = await t.app.inject({ method: 'POST', url: `/api/v1/admin/creators/${creator.id}/api-keys`, headers: admin() });
    expect(issued.statusCode).toBe(201);
    const second = json(issued).data;
    expect(second).toMatchObject({ creator_id: creator.id, revoked_at: null });
    expect(second.api_key).toMatch(/^tribes_sk_/);

    const withSecond = { authorization: `Bearer ${second.api_key}` };
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: withSecond })).statusCode).toBe(200);

    const revoked = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/api-keys/${second.id}`, headers: admin() });
    expect(revoked.statusCode).toBe(200);
    expect(json(revoked).data.revoked_at).toMatch(/Z$/);
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: withSecond });
    expect(after.statusCode).toBe(401);
    expect(json(after).error.code).toBe('unauthorized');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: creator.headers })).statusCode).toBe(200);

    const listed = json(await t.app.inject({ method: 'GET', url: `/api/v1/admin/creators/${creator.id}/api-keys`, headers: admin() })).data;
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain('api_key');
  });

  it('issues unnamed full keys by default, a named read key on request, and shows name and scope', async () => {
    const creator = await createCreator(t);
    const plain = json(await t.app.inject({ method: 'POST', url: `/api/v1/admin/creators/${creator.id}/api-keys`, headers: admin() })).data;
    expect(plain).toMatchObject({ name: null, scope: 'full', last_used_at: null });
    const reader = await t.app.inject({ method: 'POST', url: `/api/v1/admin/creators/${creator.id}/api-keys`, headers: admin(), payload: { name: ' Reports ', scope: 'read' } });
    expect(reader.statusCode).toBe(201);
    expect(json(reader).data).toMatchObject({ name: 'Reports', scope: 'read', creator_id: creator.id });
    const refused = await t.app.inject({ method: 'POST', url: '/api/v1/communities', headers: { authorization: `Bearer ${json(reader).data.api_key}` }, payload: {} });
    expect(json(refused).error.code).toBe('insufficient_scope');
    const listed = json(await t.app.inject({ method: 'GET', url: `/api/v1/admin/creators/${creator.id}/api-keys`, headers: admin() })).data;
    expect(listed.map((k: { scope: string }) => k.scope)).toEqual(['full', 'full', 'read']);
  });

  it('answers 404 for keys of an unknown creator and for an unknown key', async () => {
    const unknown = '0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b';
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/admin/creators/${unknown}/api-keys`, headers: admin() })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/api-keys/${unknown}`, headers: admin() })).statusCode).toBe(404);
  });
});

describe('admin token', () => {
  const silent = pino({ level: 'silent' });

  it('is generated into DATA_DIR/admin-token with mode 0600 and reused on the next start', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-admin-'));
    const token = resolveAdminToken(undefined, dir, silent);
    const file = path.join(dir, 'admin-token');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(token);
    expect(resolveAdminToken(undefined, dir, silent)).toBe(token);
    fs.rmSync(dir, { recursive: true });
  });

  it('comes from ADMIN_TOKEN when set, writing nothing', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-admin-'));
    expect(resolveAdminToken('x'.repeat(30), dir, silent)).toBe('x'.repeat(30));
    expect(fs.existsSync(path.join(dir, 'admin-token'))).toBe(false);
    fs.rmSync(dir, { recursive: true });
  });
});
