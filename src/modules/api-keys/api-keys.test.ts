import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, json, uniq, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { MAX_LIVE_API_KEYS } from './api-keys.service.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function createKey(creator: TestCreator, body: Record<string, unknown>, headers: Record<string, string> = creator.headers) {
  return t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: body });
}

async function newKey(creator: TestCreator, scope: 'full' | 'read', name = `key ${uniq()}`) {
  const res = await createKey(creator, { name, scope });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data as { id: string; api_key: string; scope: string; name: string };
}

const list = async (creator: TestCreator, query = '') => json(await t.app.inject({ method: 'GET', url: `/api/v1/api-keys${query}`, headers: creator.headers }));
const revoke = (creator: { headers: Record<string, string> }, id: string) => t.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: creator.headers });

describe('a creator managing API keys', () => {
  it('creates a key shown once, then lists it newest first without the secret', async () => {
    const creator = await createCreator(t);
    const res = await createKey(creator, { name: '  Zapier  ', scope: 'read' });
    expect(res.statusCode).toBe(201);
    const created = json(res).data;
    expect(created).toMatchObject({ name: 'Zapier', scope: 'read', last_used_at: null, revoked_at: null });
    expect(created.api_key).toMatch(/^tribes_sk_[A-Za-z0-9]{40}$/);
    expect(created.api_key.startsWith(created.prefix)).toBe(true);

    const listed = await list(creator);
    expect(listed.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
    expect(listed.data.map((k: { id: string }) => k.id)).toEqual([created.id, creator.apiKeyId]);
    expect(listed.data[1]).toMatchObject({ name: null, scope: 'full' });
    expect(Object.keys(listed.data[0]).sort()).toEqual(['created_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scope']);
    expect(JSON.stringify(listed)).not.toContain(created.api_key.slice(10));

    const second = await list(creator, '?page=2&limit=1');
    expect(second.data.map((k: { id: string }) => k.id)).toEqual([creator.apiKeyId]);
    expect(second.pagination).toEqual({ page: 2, limit: 1, total: 2, pages: 2 });
  });

  it('refuses a blank or long name, a missing or unknown scope and unknown fields', async () => {
    const creator = await createCreator(t);
    for (const body of [{ name: '   ', scope: 'full' }, { name: 'x'.repeat(101), scope: 'full' }, { name: 'CI' }, { name: 'CI', scope: 'admin' }, { scope: 'read' }, { name: 'CI', scope: 'read', expires: 1 }]) {
      const res = await createKey(creator, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
    }
  });

  it('answers a replay of its Idempotency-Key with the same key and api_key null', async () => {
    const creator = await createCreator(t);
    const headers = { ...creator.headers, 'idempotency-key': `key-${uniq()}` };
    const first = await createKey(creator, { name: 'Retried', scope: 'full' }, headers);
    const replay = await createKey(creator, { name: 'Retried', scope: 'full' }, headers);
    expect(first.statusCode).toBe(201);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json(first).data.api_key).toMatch(/^tribes_sk_/);
    expect(json(replay).data).toEqual({ ...json(first).data, api_key: null });
    expect((await list(creator)).pagination.total).toBe(2);
  });

  it('lets a read key list keys but not create one, saying which key to use', async () => {
    const creator = await createCreator(t);
    const reader = bearer((await newKey(creator, 'read')).api_key);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: reader })).statusCode).toBe(200);
    const refused = await createKey(creator, { name: 'Escalate', scope: 'full' }, reader);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'insufficient_scope', message: expect.stringContaining('scope "full"') });
  });

  it("neither lists nor revokes another creator's keys", async () => {
    const owner = await createCreator(t);
    const other = await createCreator(t);
    const key = await newKey(owner, 'read');
    expect((await list(other)).data.map((k: { id: string }) => k.id)).toEqual([other.apiKeyId]);
    const res = await revoke(other, key.id);
    expect(res.statusCode).toBe(404);
    expect(json(res).error.code).toBe('not_found');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(key.api_key) })).statusCode).toBe(200);
  });

  it('caps the live keys of a creator, counting revoked keys out', async () => {
    const creator = await createCreator(t);
    // Straight into the table: one short of the cap with the key the creator already has.
    await sql`insert into api_keys (id, creator_id, key_hash, prefix)
      select gen_random_uuid(), ${creator.id}, sha256(convert_to(${uniq()} || n::text, 'UTF8')), 'tribes_sk_filler'
      from generate_series(1, ${MAX_LIVE_API_KEYS - 2}) n`.execute(t.database.db);
    const last = await newKey(creator, 'read');
    const refused = await createKey(creator, { name: 'One too many', scope: 'read' });
    expect(refused.statusCode).toBe(409);
    expect(json(refused).error.code).toBe('api_key_limit_reached');
    expect((await revoke(creator, last.id)).statusCode).toBe(200);
    expect((await createKey(creator, { name: 'Room again', scope: 'read' })).statusCode).toBe(201);
  });
});

describe('revoking a key', () => {
  it('keeps the last live full key, whatever read keys remain', async () => {
    const creator = await createCreator(t);
    await newKey(creator, 'read');
    const res = await revoke(creator, creator.apiKeyId);
    expect(res.statusCode).toBe(409);
    expect(json(res).error).toMatchObject({ code: 'last_full_key', message: expect.stringContaining('Create another key with scope "full" first') });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: creator.headers })).statusCode).toBe(200);
  });

  it('lets a key revoke itself once another full key exists; its next request is 401, and revoking again keeps the first time', async () => {
    const creator = await createCreator(t);
    const spare = await newKey(creator, 'full');
    const res = await revoke(creator, creator.apiKeyId);
    expect(res.statusCode).toBe(200);
    const revokedAt = json(res).data.revoked_at;
    expect(revokedAt).toMatch(/Z$/);
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: creator.headers });
    expect(after.statusCode).toBe(401);
    const again = await revoke({ headers: bearer(spare.api_key) }, creator.apiKeyId);
    expect(again.statusCode).toBe(200);
    expect(json(again).data.revoked_at).toBe(revokedAt);
    // Now the spare is the last full key.
    expect((await revoke({ headers: bearer(spare.api_key) }, spare.id)).statusCode).toBe(409);
  });

  it('lets only one of two requests revoking each other the last two full keys succeed', async () => {
    const creator = await createCreator(t);
    const spare = await newKey(creator, 'full');
    const [a, b] = await Promise.all([revoke(creator, spare.id), revoke({ headers: bearer(spare.api_key) }, creator.apiKeyId)]);
    // The loser is 409 last_full_key, or 401 when the winner had already revoked its key.
    expect([a.statusCode, b.statusCode].filter((s) => s === 200)).toHaveLength(1);
    expect([a.statusCode, b.statusCode].every((s) => [200, 401, 409].includes(s))).toBe(true);
    const live = await t.database.db.selectFrom('api_keys').select('id').where('creator_id', '=', creator.id).where('revoked_at', 'is', null).where('scope', '=', 'full').execute();
    expect(live).toHaveLength(1);
  });
});

describe('last_used_at', () => {
  const lastUsed = async (creator: TestCreator, id: string) =>
    (await list(creator)).data.find((k: { id: string }) => k.id === id).last_used_at as string | null;

  it('is set when a key is used, and written again only once it is over a minute old', async () => {
    const creator = await createCreator(t);
    const key = await newKey(creator, 'read');
    expect(await lastUsed(creator, key.id)).toBeNull();
    await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: bearer(key.api_key) });
    await t.app.tasks.idle();
    const first = await lastUsed(creator, key.id);
    expect(first).toMatch(/Z$/);

    await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: bearer(key.api_key) });
    await t.app.tasks.idle();
    expect(await lastUsed(creator, key.id)).toBe(first);

    await sql`update api_keys set last_used_at = now() - interval '2 minutes' where id = ${key.id}`.execute(t.database.db);
    const old = await lastUsed(creator, key.id);
    await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: bearer(key.api_key) });
    await t.app.tasks.idle();
    expect(Date.parse((await lastUsed(creator, key.id))!)).toBeGreaterThan(Date.parse(old!) + 60_000);
  });
});
