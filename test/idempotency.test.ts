import { sql, type RawBuilder } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../src/db/ids.js';
import { purgeExpiredKeys } from '../src/http/idempotency.js';
import { buildTestApp, createCreator, json, uniq, type TestApp, type TestCreator } from './helpers.js';

let t: TestApp;
let failNext = false;
beforeAll(async () => {
  t = await buildTestApp({
    beforeReady: (app) =>
      // A POST that fails like a crash on demand, to prove a 5xx releases its key.
      app.post('/api/v1/__flaky', async () => {
        if (failNext) {
          failNext = false;
          throw new Error('boom');
        }
        return { success: true, data: { ok: true } };
      }),
  });
});
afterAll(() => t.close());

const create = (creator: TestCreator, key: string, payload: object) =>
  t.app.inject({ method: 'POST', url: '/api/v1/communities', headers: { ...creator.headers, 'idempotency-key': key }, payload });

const countCommunities = async (creator: TestCreator) =>
  json(await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: creator.headers })).pagination.total as number;

describe('Idempotency-Key', () => {
  it('replays the first response byte for byte for the same key and body, executing once', async () => {
    const creator = await createCreator(t);
    const body = { name: 'Once', slug: `once-${uniq()}`, category: 'yoga' };
    const first = await create(creator, 'key-1', body);
    const second = await create(creator, 'key-1', body);
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    expect(await countCommunities(creator)).toBe(1);
  });

  it('answers 409 idempotency_key_reused for the same key with another body', async () => {
    const creator = await createCreator(t);
    await create(creator, 'key-2', { name: 'A', slug: `a-${uniq()}`, category: 'yoga' });
    const res = await create(creator, 'key-2', { name: 'B', slug: `b-${uniq()}`, category: 'yoga' });
    expect(res.statusCode).toBe(409);
    expect(json(res).error.code).toBe('idempotency_key_reused');
    expect(await countCommunities(creator)).toBe(1);
  });

  it('replays an error answer too, so a retry of a conflict stays a conflict', async () => {
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const slug = `taken-${uniq()}`;
    await create(other, 'k', { name: 'First', slug, category: 'yoga' });
    const first = await create(creator, 'key-3', { name: 'Second', slug, category: 'yoga' });
    expect(first.statusCode).toBe(409);
    const again = await create(creator, 'key-3', { name: 'Second', slug, category: 'yoga' });
    expect(again.statusCode).toBe(409);
    expect(again.body).toBe(first.body);
  });

  it('executes only one of two concurrent requests with one key', async () => {
    const creator = await createCreator(t);
    const body = { name: 'Race', slug: `race-${uniq()}`, category: 'yoga' };
    const results = await Promise.all([create(creator, 'race', body), create(creator, 'race', body), create(creator, 'race', body)]);
    const codes = results.map((r) => r.statusCode).sort();
    // Each is either the one execution (201), its replay (201) or told the key is busy (409).
    for (const r of results) {
      if (r.statusCode === 409) expect(json(r).error.code).toBe('idempotency_key_in_use');
      else expect(r.statusCode).toBe(201);
    }
    expect(codes).toContain(201);
    expect(await countCommunities(creator)).toBe(1);
    const createdIds = new Set(results.filter((r) => r.statusCode === 201).map((r) => json(r).data.id));
    expect(createdIds.size).toBe(1);
  });

  it.runIf(inject('postgresUrl'))('makes a request with the key of one still running wait for it, however long, and replay its answer', async () => {
    const creator = await createCreator(t);
    const slug = `slow-${uniq()}`;
    const body = { name: 'Slow', slug, category: 'yoga' };
    let first: Promise<LightMyRequestResponse> | undefined;
    let second: Promise<LightMyRequestResponse> | undefined;
    // Another transaction holds the slug uncommitted, so the first request waits inside its
    // own transaction; the second, with the same key, must wait for the first, not run beside it.
    await t.database.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into communities (id, creator_id, name, slug, category) values (${newId()}, ${creator.id}, 'Holder', ${slug}, 'yoga')`.execute(trx);
        first = create(creator, 'slow', body);
        await new Promise((r) => setTimeout(r, 300));
        second = create(creator, 'slow', body);
        await new Promise((r) => setTimeout(r, 700));
        throw new Error('roll back the holder');
      })
      .catch(() => undefined);
    const [a, b] = await Promise.all([first!, second!]);
    expect(a.statusCode, a.body).toBe(201);
    expect(b.statusCode, b.body).toBe(201);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.body).toBe(a.body);
    expect(await countCommunities(creator)).toBe(1);
  });

  it('executes a request whose key holds only a claim left by an earlier design (nothing will finish it)', async () => {
    const creator = await createCreator(t);
    const body = { name: 'Claimed', slug: `claimed-${uniq()}`, category: 'yoga' };
    await t.database.db
      .insertInto('idempotency_keys')
      .values({ scope: `creator:${creator.id}`, key: 'left-behind', request_hash: 'whatever', state: 'in_progress' })
      .execute();
    const res = await create(creator, 'left-behind', body);
    expect(res.statusCode, res.body).toBe(201);
    expect((await create(creator, 'left-behind', body)).headers['idempotent-replayed']).toBe('true');
    expect(await countCommunities(creator)).toBe(1);
  });

  it('keeps keys apart per creator', async () => {
    const a = await createCreator(t);
    const b = await createCreator(t);
    const ra = await create(a, 'shared', { name: 'A', slug: `sa-${uniq()}`, category: 'yoga' });
    const rb = await create(b, 'shared', { name: 'B', slug: `sb-${uniq()}`, category: 'yoga' });
    expect(ra.statusCode).toBe(201);
    expect(rb.statusCode).toBe(201);
    expect(json(rb).data.name).toBe('B');
  });

  it('forgets a key after 24 hours', async () => {
    const creator = await createCreator(t);
    const body = { name: 'Old', slug: `old-${uniq()}`, category: 'yoga' };
    await create(creator, 'old-key', body);
    await t.database.db
      .updateTable('idempotency_keys')
      .set({ created_at: sql<Date>`now() - interval '25 hours'` })
      .where('scope', '=', `creator:${creator.id}`)
      .where('key', '=', 'old-key')
      .execute();
    const res = await create(creator, 'old-key', body);
    expect(res.statusCode).toBe(409); // executed again: the slug is now taken by the first run
    expect(json(res).error.code).toBe('slug_taken');
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    // The key now has two rows (the expired one stays until its day's partition is dropped): the newest counts.
    const again = await create(creator, 'old-key', body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(res.body);
  });

  it('releases the key when the request fails with a 5xx, so the retry executes', async () => {
    const creator = await createCreator(t);
    const call = () => t.app.inject({ method: 'POST', url: '/api/v1/__flaky', headers: { ...creator.headers, 'idempotency-key': 'flaky' } });
    failNext = true;
    expect((await call()).statusCode).toBe(500);
    const retry = await call();
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not claim a key for a request that fails validation', async () => {
    const creator = await createCreator(t);
    expect((await create(creator, 'fix-me', { name: 'X' })).statusCode).toBe(400);
    expect((await create(creator, 'fix-me', { name: 'X', slug: `fixed-${uniq()}`, category: 'yoga' })).statusCode).toBe(201);
  });

  it('rejects a malformed key', async () => {
    const creator = await createCreator(t);
    const res = await create(creator, 'x'.repeat(256), { name: 'X', slug: `m-${uniq()}`, category: 'yoga' });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.details).toEqual([{ field: 'Idempotency-Key', message: 'is malformed' }]);
  });
});

describe('answers that carry a secret', () => {
  it('replay a new creator or API key without the key, which is never stored', async () => {
    const admin = { authorization: `Bearer ${t.adminToken}`, 'idempotency-key': `secret-${uniq()}` };
    const body = { name: 'Secretive', email: `secretive-${uniq()}@example.com` };
    const first = await t.app.inject({ method: 'POST', url: '/api/v1/admin/creators', headers: admin, payload: body });
    expect(first.statusCode).toBe(201);
    const replay = await t.app.inject({ method: 'POST', url: '/api/v1/admin/creators', headers: admin, payload: body });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json(replay).data).toEqual({ ...json(first).data, api_key: null });

    const url = `/api/v1/admin/creators/${json(first).data.creator.id}/api-keys`;
    const keyHeaders = { ...admin, 'idempotency-key': `key-${uniq()}` };
    const key = await t.app.inject({ method: 'POST', url, headers: keyHeaders });
    const keyReplay = await t.app.inject({ method: 'POST', url, headers: keyHeaders });
    expect(json(key).data.api_key).toMatch(/^tribes_sk_/);
    expect(json(keyReplay).data).toEqual({ ...json(key).data, api_key: null });

    const stored = await t.database.db.selectFrom('idempotency_keys').select('response_body').where('scope', '=', 'admin').execute();
    for (const secret of [json(first).data.api_key, json(key).data.api_key]) expect(JSON.stringify(stored)).not.toContain(secret);
  });
});

describe('expired Idempotency-Keys', () => {
  it('are deleted in the background once older than the TTL where their day had no partition of its own, and fresh ones are kept', async () => {
    const creator = await createCreator(t);
    const scope = `creator:${creator.id}`;
    // Days long before any partition was made (migrations/0041): the default partition. A TTL of
    // ten days keeps the nine-day-old key fresh.
    await sql`insert into idempotency_keys (scope, key, request_hash, state, created_at)
      values (${scope}, 'old', 'h', 'done', now() - interval '11 days'), (${scope}, 'fresh', 'h', 'done', now() - interval '9 days')`.execute(t.database.db);
    const where = await sql<{ partition: string }>`select tableoid::regclass::text as partition from idempotency_keys where scope = ${scope}`.execute(t.database.db);
    expect(where.rows.map((r) => r.partition)).toEqual(['idempotency_keys_default', 'idempotency_keys_default']);
    // The end state only: another app's minute poller may purge the old key first.
    await purgeExpiredKeys(t.database.db, 240);
    const left = await t.database.db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).execute();
    expect(left.map((r) => r.key)).toEqual(['fresh']);
  });

  it('are dropped a day at a time once the whole day has expired, and the coming day gets its partition', async () => {
    const creator = await createCreator(t);
    const scope = `creator:${creator.id}`;
    // A day three days ago with a partition of its own, as the poller made it then.
    const start = sql<Date>`tribes_key_partition_start(now() - interval '3 days')`;
    await sql`select tribes_key_partitions_create(array[${start}])`.execute(t.database.db);
    const partition = async (of: RawBuilder<Date>) =>
      (await sql<{ name: string | null }>`select to_regclass(tribes_key_partition(${of}))::text as name`.execute(t.database.db)).rows[0]!.name;
    const old = await partition(start);
    expect(old).not.toBeNull();
    await sql`insert into idempotency_keys (scope, key, request_hash, state, created_at)
      values (${scope}, 'three-days', 'h', 'done', ${start} + interval '1 hour'), (${scope}, 'now', 'h', 'done', now())`.execute(t.database.db);
    const counted = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(old!)} where scope = ${scope}`.execute(t.database.db);
    expect(counted.rows[0]!.n).toBe(1);

    await purgeExpiredKeys(t.database.db, 24);
    expect(await partition(start)).toBeNull();
    for (const ahead of [0, 1]) expect(await partition(sql<Date>`(tribes_key_starts(1))[${sql.lit(ahead + 1)}]`)).not.toBeNull();
    const left = await t.database.db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).execute();
    expect(left.map((r) => r.key)).toEqual(['now']);
  });
});
