import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, uniq, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

/** Discovery spans every creator, so each test finds its own communities through a unique word in their names. */
const discover = (query: Record<string, string | number>) =>
  t.app.inject({ method: 'GET', url: '/api/v1/discover/communities', query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });

describe('discovery', () => {
  it('shows active public communities of every creator with their active tiers in tier order, and nothing internal', async () => {
    const word = `disc${uniq()}`;
    const maria = await createCreator(t);
    const joao = await createCreator(t);
    const forca = await createCommunity(t, maria, { name: `Força ${word}`, description: 'Treino de força', cover_image_url: 'https://img.example.com/f.jpg' });
    const pro = await createTier(t, maria, forca.id, { name: 'Pro', price_cents: 9990, benefits: ['Chat'] });
    const basic = await createTier(t, maria, forca.id, { name: 'Basic', price_cents: 2990 });
    const yearly = await createTier(t, maria, forca.id, { name: 'Basic yearly', price_cents: 29900, billing_period: 'yearly', trial_days: 7 });
    const retired = await createTier(t, maria, forca.id, { name: 'Old', price_cents: 1990 });
    await t.app.inject({ method: 'DELETE', url: `/api/v1/tiers/${retired.id}`, headers: maria.headers });
    const yoga = await createCommunity(t, joao, { name: `Yoga ${word}`, category: 'yoga' });

    const res = await discover({ q: word });
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
    expect(body.data.map((c: { id: string }) => c.id)).toEqual([yoga.id, forca.id]);
    const [yogaOut, forcaOut] = body.data;
    expect(yogaOut).toEqual({ id: yoga.id, name: `Yoga ${word}`, slug: yoga.slug, description: null, category: 'yoga', cover_image_url: null, accepting_members: true, tiers: [] });
    expect(Object.keys(forcaOut).sort()).toEqual(['accepting_members', 'category', 'cover_image_url', 'description', 'id', 'name', 'slug', 'tiers']);
    expect(forcaOut.tiers.map((x: { id: string }) => x.id)).toEqual([yearly.id, basic.id, pro.id]);
    expect(forcaOut.tiers[2]).toEqual({
      id: pro.id,
      name: 'Pro',
      price_cents: 9990,
      currency: 'brl',
      billing_period: 'monthly',
      trial_days: 0,
      benefits: ['Chat'],
      level: null,
    });
  });

  it('orders tiers by level once the creator sets levels', async () => {
    const word = `lvl${uniq()}`;
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator, { name: `Levels ${word}` });
    const elite = await createTier(t, creator, community.id, { name: 'Elite', price_cents: 1000, level: 2 });
    const plain = await createTier(t, creator, community.id, { name: 'Plain', price_cents: 5000 });
    const mid = await createTier(t, creator, community.id, { name: 'Mid', price_cents: 3000, level: 1 });
    const [found] = json(await discover({ q: word })).data;
    expect(found.tiers.map((x: { id: string }) => x.id)).toEqual([plain.id, mid.id, elite.id]);
  });

  it('hides paused and private communities', async () => {
    const word = `hide${uniq()}`;
    const creator = await createCreator(t);
    const shown = await createCommunity(t, creator, { name: `Shown ${word}` });
    await createCommunity(t, creator, { name: `Private ${word}`, is_public: false });
    const paused = await createCommunity(t, creator, { name: `Paused ${word}` });
    await t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${paused.id}`, headers: creator.headers });
    const body = json(await discover({ q: word }));
    expect(body.data.map((c: { id: string }) => c.id)).toEqual([shown.id]);
    expect(body.pagination.total).toBe(1);

    await t.app.inject({ method: 'POST', url: `/api/v1/communities/${paused.id}/resume`, headers: creator.headers });
    expect(json(await discover({ q: word })).data.map((c: { id: string }) => c.id)).toEqual([paused.id, shown.id]);
  });

  it('filters by category and by text in the name or description, in any case', async () => {
    const word = `Filt${uniq()}`;
    const creator = await createCreator(t);
    const run = await createCommunity(t, creator, { name: `Corre ${word}`, category: 'corrida' });
    const lift = await createCommunity(t, creator, { name: 'Levanta', description: `Barra e ${word.toUpperCase()} toda semana`, category: 'musculacao' });
    const ids = async (query: Record<string, string>) => json(await discover(query)).data.map((c: { id: string }) => c.id);
    expect(await ids({ q: word.toLowerCase() })).toEqual([lift.id, run.id]);
    expect(await ids({ q: word, category: 'corrida' })).toEqual([run.id]);
    expect(await ids({ q: word, category: 'yoga' })).toEqual([]);
    // LIKE wildcards in the text match only themselves.
    expect(await ids({ q: `${word}%` })).toEqual([]);
  });

  it('paginates newest first without overlap', async () => {
    const word = `page${uniq()}`;
    const creator = await createCreator(t);
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await createCommunity(t, creator, { name: `Page ${i} ${word}` })).id);
    const first = json(await discover({ q: word, limit: 2 }));
    const second = json(await discover({ q: word, limit: 2, page: 2 }));
    expect(first.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2 });
    expect(second.pagination).toEqual({ page: 2, limit: 2, total: 3, pages: 2 });
    expect([...first.data, ...second.data].map((c: { id: string }) => c.id)).toEqual(made.reverse());
  });

  it('needs no credentials and rejects bad filters with 400', async () => {
    const member = await createMember(t);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/discover/communities', headers: member.headers })).statusCode).toBe(200);
    const bad: Record<string, string | number>[] = [{ category: 'boxing' }, { q: 'x'.repeat(101) }, { limit: 101 }, { page: 0 }, { sort: 'name' }];
    for (const query of bad) {
      const res = await discover(query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
    }
  });
});
