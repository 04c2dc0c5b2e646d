import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { subscribe } from '../../../test/billing-kit.js';
import {
  BENCH_PRESS_ID,
  buildTestApp,
  createCommunity,
  createCreator,
  createExercise,
  createMember,
  createProgram,
  createWorkout,
  json,
  type TestApp,
  type TestCreator,
} from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const call = (creator: TestCreator, method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: creator.headers, ...(payload === undefined ? {} : { payload }) });
const entry = (overrides: object = {}) => ({ exercise_id: BENCH_PRESS_ID, sets: 3, reps: '8', load_kg: 40, rest_sec: 60, ...overrides });

async function setup() {
  const creator = await createCreator(t);
  const community = await createCommunity(t, creator);
  return { creator, community };
}

describe('workout programs', () => {
  it('creates a program and shows it with its workouts and exercise names', async () => {
    const { creator, community } = await setup();
    const program = await createProgram(t, creator, community.id, { description: '# Semana 1\nFoco em técnica.' });
    expect(program).toMatchObject({ community_id: community.id, level: 'beginner', goal: 'strength', duration_weeks: 12, frequency_per_week: 3, workouts_count: 0, workouts: [] });
    const workout = await createWorkout(t, creator, program.id, { exercises: [entry({ reps: '8-12', load_kg: 42.5 }), entry({ reps: 'AMRAP', load_kg: null, rest_sec: null })] });
    expect(workout).toMatchObject({ position: 0, exercises: [{ exercise_name: 'Barbell Bench Press', reps: '8-12', load_kg: 42.5 }, { reps: 'AMRAP', load_kg: null }] });
    const got = json(await call(creator, 'GET', `/api/v1/workout-programs/${program.id}`)).data;
    expect(got.workouts_count).toBe(1);
    expect(got.workouts[0].exercises[0]).toMatchObject({ exercise_id: BENCH_PRESS_ID, exercise_name: 'Barbell Bench Press', muscle_group: 'chest', sets: 3, rest_sec: 60 });
  });

  it('validates program fields: level, goal, weeks 1–52, frequency 1–7, description up to 20,000 characters', async () => {
    const { creator, community } = await setup();
    const base = { community_id: community.id, name: 'P', duration_weeks: 4, frequency_per_week: 3, level: 'beginner', goal: 'strength' };
    for (const bad of [{ level: 'expert' }, { goal: 'fun' }, { duration_weeks: 0 }, { duration_weeks: 53 }, { frequency_per_week: 8 }, { description: 'x'.repeat(20_001) }, { name: ' ' }]) {
      const res = await call(creator, 'POST', '/api/v1/workout-programs', { ...base, ...bad });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await call(creator, 'POST', '/api/v1/workout-programs', { ...base, description: 'x'.repeat(20_000) })).statusCode).toBe(201);
  });

  it("refuses a program in another creator's community (404) and hides another creator's program (404)", async () => {
    const { creator, community } = await setup();
    const other = await createCreator(t);
    const res = await call(other, 'POST', '/api/v1/workout-programs', { community_id: community.id, name: 'P', duration_weeks: 4, frequency_per_week: 3, level: 'beginner', goal: 'strength' });
    expect(res.statusCode).toBe(404);
    const program = await createProgram(t, creator, community.id);
    expect((await call(other, 'GET', `/api/v1/workout-programs/${program.id}`)).statusCode).toBe(404);
    expect(json(await call(other, 'GET', '/api/v1/workout-programs')).data).toEqual([]);
  });

  it('validates exercise entries: visible exercise, sets 1–20, reps text, load 2 decimals, rest 0–900', async () => {
    const { creator, community } = await setup();
    const other = await createCreator(t);
    const foreign = await createExercise(t, other);
    const own = await createExercise(t, creator);
    const program = await createProgram(t, creator, community.id);
    const add = (e: object) => call(creator, 'POST', `/api/v1/workout-programs/${program.id}/workouts`, { name: 'A', exercises: [entry(e)] });
    for (const bad of [{ sets: 0 }, { sets: 21 }, { reps: '8 reps' }, { reps: '12-8' }, { reps: '' }, { load_kg: -1 }, { load_kg: 10.005 }, { rest_sec: 901 }, { exercise_id: foreign.id }]) {
      const res = await add(bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect(json(await add({ exercise_id: foreign.id })).error.details).toContainEqual({ field: 'exercises.0.exercise_id', message: 'is not a catalog exercise nor one of yours' });
    for (const good of [{ reps: '30s' }, { reps: '10' }, { load_kg: 22.75 }, { rest_sec: 0 }, { exercise_id: own.id }]) expect((await add(good)).statusCode, JSON.stringify(good)).toBe(201);
  });

  it('lists programs newest first, filtered by community, paged', async () => {
    const { creator, community } = await setup();
    const second = await createCommunity(t, creator);
    const a = await createProgram(t, creator, community.id);
    const b = await createProgram(t, creator, second.id);
    const all = json(await call(creator, 'GET', '/api/v1/workout-programs?limit=1'));
    expect(all.pagination).toEqual({ page: 1, limit: 1, total: 2, pages: 2 });
    expect(all.data[0].id).toBe(b.id);
    const filtered = json(await call(creator, 'GET', `/api/v1/workout-programs?community_id=${community.id}`)).data;
    expect(filtered.map((p: any) => p.id)).toEqual([a.id]);
    expect((await call(creator, 'GET', `/api/v1/workout-programs?community_id=${(await createCommunity(t, await createCreator(t))).id}`)).statusCode).toBe(404);
  });

  it('updates and deletes programs and workouts, and reorders workouts', async () => {
    const { creator, community } = await setup();
    const program = await createProgram(t, creator, community.id);
    const patched = json(await call(creator, 'PATCH', `/api/v1/workout-programs/${program.id}`, { name: 'Hipertrofia', goal: 'hypertrophy' })).data;
    expect(patched).toMatchObject({ name: 'Hipertrofia', goal: 'hypertrophy', level: 'beginner' });
    const [w1, w2, w3] = [await createWorkout(t, creator, program.id, { name: 'A' }), await createWorkout(t, creator, program.id, { name: 'B' }), await createWorkout(t, creator, program.id, { name: 'C' })];
    const reordered = await call(creator, 'PUT', `/api/v1/workout-programs/${program.id}/workout-order`, { workout_ids: [w3!.id, w1!.id, w2!.id] });
    expect(reordered.statusCode, reordered.body).toBe(200);
    expect(json(reordered).data.workouts.map((w: any) => [w.name, w.position])).toEqual([['C', 0], ['A', 1], ['B', 2]]);
    expect((await call(creator, 'PUT', `/api/v1/workout-programs/${program.id}/workout-order`, { workout_ids: [w1!.id, w2!.id] })).statusCode).toBe(400);
    const renamed = json(await call(creator, 'PATCH', `/api/v1/workouts/${w1!.id}`, { name: 'A2', exercises: [entry({ sets: 5 })] })).data;
    expect(renamed).toMatchObject({ name: 'A2', position: 1, exercises: [{ sets: 5 }] });
    expect((await call(creator, 'DELETE', `/api/v1/workouts/${w3!.id}`)).statusCode).toBe(200);
    const after = json(await call(creator, 'GET', `/api/v1/workout-programs/${program.id}`)).data;
    expect(after.workouts.map((w: any) => [w.name, w.position])).toEqual([['A2', 0], ['B', 1]]);
    expect((await call(creator, 'PATCH', `/api/v1/workouts/${w3!.id}`, { name: 'X' })).statusCode).toBe(404);
    expect(json(await call(creator, 'DELETE', `/api/v1/workout-programs/${program.id}`)).data).toEqual({ id: program.id, deleted: true });
    expect((await call(creator, 'GET', `/api/v1/workout-programs/${program.id}`)).statusCode).toBe(404);
  });
});

describe('programs in the member app', () => {
  it('shows a member the programs of communities they hold a live subscription to', async () => {
    const { creator, member, communityId } = await subscribe(t, { mirror: 'reconcile' });
    const program = await createProgram(t, creator, communityId);
    await createWorkout(t, creator, program.id);
    const elsewhere = await createProgram(t, creator, (await createCommunity(t, creator)).id);
    const list = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/programs', headers: member.headers }));
    expect(list.data.map((p: any) => p.id)).toEqual([program.id]);
    const detail = await t.app.inject({ method: 'GET', url: `/api/v1/member/programs/${program.id}`, headers: member.headers });
    expect(detail.statusCode).toBe(200);
    expect(json(detail).data.workouts[0].exercises[0].exercise_name).toBe('Barbell Bench Press');
    const refused = await t.app.inject({ method: 'GET', url: `/api/v1/member/programs/${elsewhere.id}`, headers: member.headers });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('forbidden');
  });

  it('refuses programs to a member without a live subscription (403) and answers 404 for none', async () => {
    const { creator, community } = await setup();
    const program = await createProgram(t, creator, community.id);
    const stranger = await createMember(t);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/member/programs/${program.id}`, headers: stranger.headers })).statusCode).toBe(403);
    expect(json(await t.app.inject({ method: 'GET', url: '/api/v1/member/programs', headers: stranger.headers })).data).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/member/programs/0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b', headers: stranger.headers })).statusCode).toBe(404);
  });
});

describe('the size of a program', () => {
  it('holds at most 500 workouts: the 501st is 409 until one is deleted, and a full program can still be reordered', async () => {
    const { creator, community } = await setup();
    const program = await createProgram(t, creator, community.id);
    // 499 workouts written directly (through the API this would be 499 requests); the 500th through the API.
    await sql`insert into workouts (id, creator_id, program_id, name, position)
      select gen_random_uuid(), ${creator.id}, ${program.id}, 'Treino ' || n, n - 1 from generate_series(1, 499) as n`.execute(t.database.db);
    const last = await createWorkout(t, creator, program.id);
    expect(last.position as number).toBe(499);
    const refused = await call(creator, 'POST', `/api/v1/workout-programs/${program.id}/workouts`, { name: 'Mais um', exercises: [entry()] });
    expect(refused.statusCode).toBe(409);
    expect(json(refused).error).toMatchObject({ code: 'conflict', message: expect.stringContaining('500 workouts') });
    const ids = json(await call(creator, 'GET', `/api/v1/workout-programs/${program.id}`)).data.workouts.map((w: { id: string }) => w.id);
    expect(ids).toHaveLength(500);
    const reordered = await call(creator, 'PUT', `/api/v1/workout-programs/${program.id}/workout-order`, { workout_ids: [...ids].reverse() });
    expect(reordered.statusCode).toBe(200);
    expect((await call(creator, 'DELETE', `/api/v1/workouts/${last.id}`)).statusCode).toBe(200);
    expect((await call(creator, 'POST', `/api/v1/workout-programs/${program.id}/workouts`, { name: 'Cabe agora', exercises: [entry()] })).statusCode).toBe(201);
  });
});
