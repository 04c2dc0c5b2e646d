import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/ids.js';
import { buildTestApp, createCommunity, createCreator, json, uniq, type TestApp, type TestCreator } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const call = (creator: TestCreator, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: creator.headers, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('communities', () => {
  it('creates a community with defaults and answers it in the envelope', async () => {
    const creator = await createCreator(t);
    const slug = `yoga-${uniq()}`;
    const res = await call(creator, 'POST', '/api/v1/communities', { name: 'Yoga Flow', slug, category: 'yoga', description: 'Calm' });
    expect(res.statusCode).toBe(201);
    const body = json(res);
    expect(body.success).toBe(true);
    expect(body.data).toMatchObject({
      name: 'Yoga Flow',
      slug,
      category: 'yoga',
      description: 'Calm',
      is_public: true,
      cover_image_url: null,
      status: 'active',
      members_count: 0,
      active_subscribers: 0,
      mrr_cents: 0,
    });
    expect(body.data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(body.data.created_at).toMatch(/Z$/);
  });

  it('refuses slugs outside a-z, 0-9 and "-" or outside 3 to 63 characters', async () => {
    const creator = await createCreator(t);
    for (const slug of ['Upper', 'with space', 'ab', 'x'.repeat(64), 'acentuação', 'under_score']) {
      const res = await call(creator, 'POST', '/api/v1/communities', { name: 'X', slug, category: 'yoga' });
      expect(res.statusCode, slug).toBe(400);
      expect(json(res).error.details).toContainEqual(expect.objectContaining({ field: 'slug' }));
    }
    const ok = await call(creator, 'POST', '/api/v1/communities', { name: 'X', slug: `a-${uniq()}`.slice(0, 63), category: 'yoga' });
    expect(ok.statusCode).toBe(201);
  });

  it('answers 409 slug_taken when another creator already uses the slug', async () => {
    const a = await createCreator(t);
    const b = await createCreator(t);
    const first = await createCommunity(t, a);
    const res = await call(b, 'POST', '/api/v1/communities', { name: 'Copy', slug: first.slug, category: 'yoga' });
    expect(res.statusCode).toBe(409);
    expect(json(res).error.code).toBe('slug_taken');
  });

  it('requires name, slug and category and rejects an unknown category', async () => {
    const creator = await createCreator(t);
    const res = await call(creator, 'POST', '/api/v1/communities', { category: 'pilates' });
    expect(res.statusCode).toBe(400);
    const fields = json(res).error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'slug', 'category']));
  });

  it('updates only the fields sent and clears nullable ones with null', async () => {
    const creator = await createCreator(t);
    const c = await createCommunity(t, creator, { description: 'Old', cover_image_url: 'https://img.example.com/a.jpg' });
    const res = await call(creator, 'PATCH', `/api/v1/communities/${c.id}`, { name: 'New name', cover_image_url: null, is_public: false });
    expect(res.statusCode).toBe(200);
    expect(json(res).data).toMatchObject({ name: 'New name', description: 'Old', cover_image_url: null, is_public: false, slug: c.slug });
  });

  it('refuses a PATCH carrying slug with 400 and changes nothing', async () => {
    const creator = await createCreator(t);
    const c = await createCommunity(t, creator);
    const res = await call(creator, 'PATCH', `/api/v1/communities/${c.id}`, { slug: 'another-slug', name: 'Renamed' });
    expect(res.statusCode).toBe(400);
    expect(json(res).error).toMatchObject({ code: 'validation_error', details: [{ field: 'slug', message: 'is immutable' }] });
    const after = json(await call(creator, 'GET', `/api/v1/communities/${c.id}`)).data;
    expect(after.name).toBe(c.name);
  });

  it('pauses on DELETE, keeps the record, and resumes through POST /resume', async () => {
    const creator = await createCreator(t);
    const c = await createCommunity(t, creator);
    const paused = await call(creator, 'DELETE', `/api/v1/communities/${c.id}`);
    expect(paused.statusCode).toBe(200);
    expect(json(paused).data).toMatchObject({ id: c.id, status: 'paused' });
    expect(json(paused).data.paused_at).toMatch(/Z$/);
    const again = await call(creator, 'DELETE', `/api/v1/communities/${c.id}`);
    expect(json(again).data.paused_at).toBe(json(paused).data.paused_at);
    const get = await call(creator, 'GET', `/api/v1/communities/${c.id}`);
    expect(json(get).data.status).toBe('paused');
    const resumed = await call(creator, 'POST', `/api/v1/communities/${c.id}/resume`);
    expect(resumed.statusCode).toBe(200);
    expect(json(resumed).data).toMatchObject({ status: 'active', paused_at: null });
  });

  it('lists only the creator\'s own communities, newest first, paginated and filterable by status', async () => {
    const creator = await createCreator(t);
    const other = await createCreator(t);
    await createCommunity(t, other);
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createCommunity(t, creator));
    await call(creator, 'DELETE', `/api/v1/communities/${made[0]!.id}`);

    const page1 = json(await call(creator, 'GET', '/api/v1/communities?limit=2'));
    expect(page1.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2 });
    expect(page1.data.map((c: { id: string }) => c.id)).toEqual([made[2]!.id, made[1]!.id]);
    const page2 = json(await call(creator, 'GET', '/api/v1/communities?limit=2&page=2'));
    expect(page2.data.map((c: { id: string }) => c.id)).toEqual([made[0]!.id]);

    const paused = json(await call(creator, 'GET', '/api/v1/communities?status=paused'));
    expect(paused.data.map((c: { id: string }) => c.id)).toEqual([made[0]!.id]);
    expect(paused.pagination.total).toBe(1);
  });

  it('rejects page 0, limit 101 and an unknown query parameter', async () => {
    const creator = await createCreator(t);
    for (const qs of ['page=0', 'limit=101', 'limit=abc', 'sort=name']) {
      const res = await call(creator, 'GET', `/api/v1/communities?${qs}`);
      expect(res.statusCode, qs).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
    }
  });

  it("answers 404 for another creator's community on every operation", async () => {
    const owner = await createCreator(t);
    const intruder = await createCreator(t);
    const c = await createCommunity(t, owner);
    for (const [method, url, payload] of [
      ['GET', `/api/v1/communities/${c.id}`],
      ['PATCH', `/api/v1/communities/${c.id}`, { name: 'Hijack' }],
      ['DELETE', `/api/v1/communities/${c.id}`],
      ['POST', `/api/v1/communities/${c.id}/resume`],
    ] as const) {
      const res = await call(intruder, method, url, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(json(res).error.code).toBe('not_found');
    }
    expect(json(await call(owner, 'GET', `/api/v1/communities/${c.id}`)).data).toMatchObject({ name: c.name, status: 'active' });
  });

  it('computes members_count, active_subscribers and mrr_cents from the subscriptions it holds', async () => {
    const creator = await createCreator(t);
    const c = await createCommunity(t, creator);
    const db = t.database.db;
    const tierId = newId();
    await db
      .insertInto('tiers')
      .values({ id: tierId, creator_id: creator.id, community_id: c.id, name: 'Pro', price_cents: 1000, billing_period: 'quarterly' })
      .execute();
    const member = async () => {
      const id = newId();
      await db.insertInto('members').values({ id, name: 'M', email: `m-${uniq()}@example.com` }).execute();
      return id;
    };
    const m1 = await member();
    const m2 = await member();
    const m3 = await member();
    const sub = (member_id: string, status: 'trialing' | 'active' | 'past_due' | 'canceled', price_cents: number, billing_period: 'monthly' | 'quarterly' | 'yearly') => ({
      id: newId(), creator_id: creator.id, community_id: c.id, tier_id: tierId, member_id, status, price_cents, billing_period,
    });
    await db
      .insertInto('subscriptions')
      .values([
        sub(m1, 'active', 1000, 'quarterly'), // 333.33 → 333
        sub(m1, 'active', 1001, 'yearly'), // 83.42 → 83
        sub(m2, 'past_due', 1003, 'quarterly'), // 334.33 → 334
        sub(m3, 'trialing', 5000, 'monthly'), // trials are not MRR
        sub(m3, 'canceled', 9999, 'monthly'),
      ])
      .execute();
    // Written around the mirror, as reconciliation finds data: its rebuild brings the counters the figures read up to date.
    await db.transaction().execute((trx) => t.app.metricsCounters.rebuild(creator.id, trx));
    const got = json(await call(creator, 'GET', `/api/v1/communities/${c.id}`)).data;
    expect(got).toMatchObject({ members_count: 3, active_subscribers: 2, mrr_cents: 333 + 83 + 334 });
    const listed = json(await call(creator, 'GET', '/api/v1/communities')).data[0];
    expect(listed).toMatchObject({ id: c.id, members_count: 3, active_subscribers: 2, mrr_cents: 750 });
  });
});
