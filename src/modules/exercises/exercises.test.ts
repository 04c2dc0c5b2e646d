import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, createExercise, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { EXERCISES } from './catalog.data.js';
import { seedExerciseCatalog } from './seed.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ config: { exerciseVideoBaseUrl: 'https://cdn.example.com/ex' } });
});
afterAll(() => t.close());

const get = (creator: TestCreator, url: string) => t.app.inject({ method: 'GET', url, headers: creator.headers });

describe('exercise catalog', () => {
  it('serves the whole seeded catalog, paged', async () => {
    const creator = await createCreator(t);
    const res = await get(creator, '/api/v1/exercises?limit=100');
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(body.pagination).toEqual({ page: 1, limit: 100, total: EXERCISES.length, pages: Math.ceil(EXERCISES.length / 100) });
    expect(body.data[0].name.toLowerCase() < body.data[99].name.toLowerCase()).toBe(true);
    const page2 = json(await get(creator, '/api/v1/exercises?limit=100&page=2'));
    expect(body.data.length + page2.data.length).toBe(EXERCISES.length);
  });

  it('gives catalog exercises a video URL under the configured base, by slug', async () => {
    const creator = await createCreator(t);
    const bench = json(await get(creator, '/api/v1/exercises/33b0a54f-7196-43fb-90b5-067f42ea28b6')).data;
    expect(bench).toMatchObject({ name: 'Barbell Bench Press', muscle_group: 'chest', kind: 'weighted', custom: false });
    expect(bench.video_url).toBe('https://cdn.example.com/ex/barbell-bench-press');
  });

  it('filters by muscle group, equipment, kind and text', async () => {
    const creator = await createCreator(t);
    const chest = json(await get(creator, '/api/v1/exercises?muscle_group=chest&limit=100'));
    expect(chest.pagination.total).toBe(EXERCISES.filter((e) => e.muscle_group === 'chest').length);
    expect(chest.data.every((e: any) => e.muscle_group === 'chest')).toBe(true);
    const kettlebell = json(await get(creator, '/api/v1/exercises?equipment=kettlebell&limit=100'));
    expect(kettlebell.pagination.total).toBe(EXERCISES.filter((e) => e.equipment.includes('kettlebell')).length);
    const timed = json(await get(creator, '/api/v1/exercises?kind=timed&limit=100'));
    expect(timed.pagination.total).toBe(EXERCISES.filter((e) => e.kind === 'timed').length);
    const squat = json(await get(creator, '/api/v1/exercises?q=SQUAT&limit=100'));
    expect(squat.data.length).toBeGreaterThan(0);
    expect(squat.data.every((e: any) => /squat|agachamento/i.test(e.name + e.name_pt))).toBe(true);
    const literal = json(await get(creator, '/api/v1/exercises?q=%25'));
    expect(literal.pagination.total).toBe(0);
  });

  it('answers 400 for an unknown muscle group or equipment', async () => {
    const creator = await createCreator(t);
    const res = await get(creator, '/api/v1/exercises?muscle_group=wings');
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
    expect((await get(creator, '/api/v1/exercises?equipment=spaceship')).statusCode).toBe(400);
  });

  it("lets a creator add an exercise that only they see, never another creator", async () => {
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const mine = await createExercise(t, creator, { name: 'Landmine Hug Squat Pro', muscle_group: 'quadriceps', equipment: ['landmine'] });
    expect(mine).toMatchObject({ custom: true, slug: null, video_url: null, muscle_group: 'quadriceps' });
    const listed = json(await get(creator, '/api/v1/exercises?q=Hug Squat Pro')).data;
    expect(listed.map((e: any) => e.id)).toEqual([mine.id]);
    expect(json(await get(other, '/api/v1/exercises?q=Hug Squat Pro')).data).toEqual([]);
    expect((await get(other, `/api/v1/exercises/${mine.id}`)).statusCode).toBe(404);
    expect(json(await get(creator, '/api/v1/exercises?limit=1')).pagination.total).toBe(EXERCISES.length + 1);
  });

  it('refuses a duplicate own exercise name (409) and bodyweight mixed with equipment (400)', async () => {
    const creator = await createCreator(t);
    await createExercise(t, creator, { name: 'Sled Sprint Deluxe' });
    const dup = await t.app.inject({ method: 'POST', url: '/api/v1/exercises', headers: creator.headers, payload: { name: 'sled sprint deluxe', muscle_group: 'chest', equipment: ['sled'], kind: 'weighted' } });
    expect(dup.statusCode).toBe(409);
    const mixed = await t.app.inject({ method: 'POST', url: '/api/v1/exercises', headers: creator.headers, payload: { name: 'X', muscle_group: 'chest', equipment: ['bodyweight', 'band'], kind: 'bodyweight' } });
    expect(mixed.statusCode).toBe(400);
    const badVideo = await t.app.inject({ method: 'POST', url: '/api/v1/exercises', headers: creator.headers, payload: { name: 'Y', muscle_group: 'chest', equipment: ['band'], kind: 'bodyweight', video_url: 'http://insecure.example.com/v' } });
    expect(badVideo.statusCode).toBe(400);
  });

  it('seeds idempotently: running the seed again changes nothing', async () => {
    await seedExerciseCatalog(t.database.db);
    const creator = await createCreator(t);
    expect(json(await get(creator, '/api/v1/exercises?limit=1')).pagination.total).toBe(EXERCISES.length);
  });
});
