import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../../../test/billing-kit.js';
import { BENCH_PRESS_ID, buildTestApp, createCommunity, createCreator, createExercise, createProgram, createWorkout, json, mintMember, type TestApp, type TestMember } from '../../../test/helpers.js';
import { createTrainingViewRepo } from './creator-view.repo.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

/** A bodyweight exercise of the seeded catalog. */
let pullUp = '';
beforeAll(async () => {
  pullUp = (await t.database.db.selectFrom('exercises').select('id').where('slug', '=', 'pull-up').executeTakeFirstOrThrow()).id;
});

type SetIn = { exercise_id?: string; reps: number; load_kg?: number; is_warmup?: boolean; rpe?: number };
let minutes = 0;
/** Each log a minute after the previous one, so history has a clear order. */
const at = () => new Date(Date.UTC(2026, 0, 1) + ++minutes * 60_000).toISOString();

async function logWorkout(member: TestMember, sets: SetIn[], extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/member/workout-logs',
    headers: { ...member.headers, ...headers },
    payload: { performed_at: at(), sets: sets.map((s) => ({ exercise_id: BENCH_PRESS_ID, ...s })), ...extra },
  });
}
async function prsOf(member: TestMember, sets: SetIn[], extra: Record<string, unknown> = {}) {
  const res = await logWorkout(member, sets, extra);
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data.prs as Array<{ exercise_id: string; kind: string; value: number; previous_value: number; set_index: number }>;
}
const kinds = (prs: Array<{ kind: string }>) => prs.map((p) => p.kind).sort();

describe('logging workouts and personal records', () => {
  it('records the sets and treats the first set ever as the baseline, not a PR', async () => {
    const member = await mintMember(t);
    const res = await logWorkout(member, [{ reps: 5, load_kg: 60, rpe: 8 }]);
    expect(res.statusCode, res.body).toBe(201);
    expect(json(res).data).toMatchObject({ workout_id: null, community_id: null, prs: [], sets: [{ exercise_id: BENCH_PRESS_ID, exercise_name: 'Barbell Bench Press', reps: 5, load_kg: 60, is_warmup: false, rpe: 8 }] });
  });

  it('detects all four kinds for a weighted set that beats everything before it', async () => {
    const member = await mintMember(t);
    await prsOf(member, [{ reps: 5, load_kg: 60 }]);
    const prs = await prsOf(member, [{ reps: 6, load_kg: 62.5 }]);
    expect(prs).toEqual(
      expect.arrayContaining([
        { exercise_id: BENCH_PRESS_ID, kind: 'max_load', value: 62.5, previous_value: 60, set_index: 0 },
        { exercise_id: BENCH_PRESS_ID, kind: 'est_1rm', value: 75, previous_value: 70, set_index: 0 },
        { exercise_id: BENCH_PRESS_ID, kind: 'max_volume', value: 375, previous_value: 300, set_index: 0 },
        { exercise_id: BENCH_PRESS_ID, kind: 'max_reps', value: 6, previous_value: 5, set_index: 0 },
      ]),
    );
    expect(prs).toHaveLength(4);
  });

  it('does not count a tie as a PR', async () => {
    const member = await mintMember(t);
    await prsOf(member, [{ reps: 5, load_kg: 60 }]);
    expect(await prsOf(member, [{ reps: 5, load_kg: 60 }])).toEqual([]);
    // 90 × 10 and 100 × 6 estimate the same 1RM (120): a tie in est_1rm.
    await prsOf(member, [{ reps: 6, load_kg: 100 }]);
    expect(kinds(await prsOf(member, [{ reps: 10, load_kg: 90 }]))).toEqual(['max_reps', 'max_volume']);
  });

  it('never lets a warm-up make or hold a PR', async () => {
    const member = await mintMember(t);
    await prsOf(member, [{ reps: 20, load_kg: 100, is_warmup: true }, { reps: 5, load_kg: 50 }]);
    expect(await prsOf(member, [{ reps: 25, load_kg: 120, is_warmup: true }])).toEqual([]);
    expect(kinds(await prsOf(member, [{ reps: 5, load_kg: 55 }]))).toEqual(['est_1rm', 'max_load', 'max_volume']);
  });

  it('lists the PRs of a log by the set that made them, then by kind', async () => {
    const member = await mintMember(t);
    await prsOf(member, [{ reps: 5, load_kg: 60 }]);
    // Set 0 beats on reps only; set 1 beats on load (and so est_1rm and volume).
    const prs = await prsOf(member, [{ reps: 8, load_kg: 20 }, { reps: 5, load_kg: 70 }]);
    expect(prs.map((p) => [p.set_index, p.kind])).toEqual([
      [0, 'max_reps'],
      [1, 'max_load'],
      [1, 'est_1rm'],
      [1, 'max_volume'],
    ]);
  });

  it('reports each kind once per log, for its best set, when two sets beat the record', async () => {
    const member = await mintMember(t);
    await prsOf(member, [{ reps: 5, load_kg: 100 }]);
    const prs = await prsOf(member, [{ reps: 5, load_kg: 105 }, { reps: 2, load_kg: 110 }, { reps: 12, load_kg: 80 }]);
    expect(prs.find((p) => p.kind === 'max_load')).toMatchObject({ value: 110, previous_value: 100, set_index: 1 });
    expect(prs.find((p) => p.kind === 'max_volume')).toMatchObject({ value: 960, previous_value: 500, set_index: 2 });
    expect(prs.find((p) => p.kind === 'est_1rm')).toMatchObject({ value: 122.5, set_index: 0 });
    expect(prs).toHaveLength(4);
  });

  it('judges a bodyweight set (load 0) on max_reps alone', async () => {
    const member = await mintMember(t);
    await prsOf(member, [{ exercise_id: pullUp, reps: 8 }]);
    expect(await prsOf(member, [{ exercise_id: pullUp, reps: 10, load_kg: 0 }])).toEqual([{ exercise_id: pullUp, kind: 'max_reps', value: 10, previous_value: 8, set_index: 0 }]);
    expect(await prsOf(member, [{ exercise_id: pullUp, reps: 6, load_kg: 10 }])).toEqual([]);
  });

  it('recomputes the records when a log is deleted', async () => {
    const member = await mintMember(t);
    await prsOf(member, [{ reps: 5, load_kg: 60 }]);
    const best = json(await logWorkout(member, [{ reps: 5, load_kg: 80 }])).data;
    expect(kinds(best.prs)).toEqual(['est_1rm', 'max_load', 'max_volume']);
    expect(kinds(await prsOf(member, [{ reps: 5, load_kg: 70 }]))).toEqual([]);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/member/workout-logs/${best.id}`, headers: member.headers });
    expect(del.statusCode).toBe(200);
    // Its sets go with it (no cascading key since migration 0010: the delete removes them).
    expect(await t.database.db.selectFrom('workout_sets').select('position').where('log_id', '=', best.id).execute()).toEqual([]);
    // Without the 80 kg log the record is 70 kg again: 72.5 beats it, 70 ties it.
    expect(await prsOf(member, [{ reps: 5, load_kg: 70 }])).toEqual([]);
    expect((await prsOf(member, [{ reps: 5, load_kg: 72.5 }])).find((p) => p.kind === 'max_load')).toMatchObject({ value: 72.5, previous_value: 70 });
  });

  it("gives each of many members logging at once their own log and PRs, judged against their own records", async () => {
    const members = await Promise.all(Array.from({ length: 6 }, () => mintMember(t)));
    for (const [i, m] of members.entries()) await prsOf(m, [{ reps: 5, load_kg: 50 + i }]);
    // Sent together, these share logging statements (group commit); each answer must still be its own.
    const answers = await Promise.all(members.map((m, i) => logWorkout(m, [{ reps: 5, load_kg: 60 + i }])));
    for (const [i, res] of answers.entries()) {
      expect(res.statusCode, res.body).toBe(201);
      expect(json(res).data.prs.find((p: { kind: string }) => p.kind === 'max_load')).toMatchObject({ value: 60 + i, previous_value: 50 + i });
      const logs = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/workout-logs', headers: members[i]!.headers })).data;
      expect(logs.map((l: { sets: Array<{ load_kg: number }> }) => l.sets[0]!.load_kg)).toEqual([60 + i, 50 + i]);
    }
  });

  it('fits a back-dated log into the history: judged against what came before it', async () => {
    const member = await mintMember(t);
    await prsOf(member, [{ reps: 5, load_kg: 100 }], { performed_at: '2025-06-10T10:00:00Z' });
    const early = await prsOf(member, [{ reps: 5, load_kg: 90 }], { performed_at: '2025-06-01T10:00:00Z' });
    expect(early).toEqual([]);
    // The 90 kg log is now the baseline; so 100 kg (later) is the record holder and 95 kg is not a PR.
    expect(await prsOf(member, [{ reps: 5, load_kg: 95 }])).toEqual([]);
    expect((await prsOf(member, [{ reps: 5, load_kg: 100.5 }])).find((p) => p.kind === 'max_load')?.previous_value).toBe(100);
  });

  it('lists the member\'s own logs, newest first, and deletes only their own', async () => {
    const member = await mintMember(t);
    const other = await mintMember(t);
    const first = json(await logWorkout(member, [{ reps: 5, load_kg: 60 }])).data;
    const second = json(await logWorkout(member, [{ reps: 5, load_kg: 60 }])).data;
    const list = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/workout-logs?limit=1', headers: member.headers }));
    expect(list.pagination).toEqual({ page: 1, limit: 1, total: 2, pages: 2 });
    expect(list.data[0].id).toBe(second.id);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/member/workout-logs/${first.id}`, headers: other.headers })).statusCode).toBe(404);
  });

  it('validates a log: performed_at not in the future, at most 200 sets, loads with 2 decimals, exercises the member may use', async () => {
    const member = await mintMember(t);
    const future = await logWorkout(member, [{ reps: 5, load_kg: 60 }], { performed_at: new Date(Date.now() + 10 * 60_000).toISOString() });
    expect(future.statusCode).toBe(400);
    expect(json(future).error.details).toContainEqual({ field: 'performed_at', message: 'is in the future' });
    expect((await logWorkout(member, [{ reps: 5 }], { performed_at: new Date(Date.now() + 60_000).toISOString() })).statusCode).toBe(201);
    expect((await logWorkout(member, Array.from({ length: 201 }, () => ({ reps: 5, load_kg: 20 })))).statusCode).toBe(400);
    expect((await logWorkout(member, Array.from({ length: 200 }, () => ({ reps: 5, load_kg: 20 })))).statusCode).toBe(201);
    expect((await logWorkout(member, [{ reps: 5, load_kg: 20.125 }])).statusCode).toBe(400);
    expect((await logWorkout(member, [{ reps: 0, load_kg: 20 }])).statusCode).toBe(400);
    expect((await logWorkout(member, [])).statusCode).toBe(400);
    const privateExercise = await createExercise(t, await createCreator(t));
    const res = await logWorkout(member, [{ exercise_id: privateExercise.id, reps: 5 }]);
    expect(res.statusCode).toBe(400);
    expect(json(res).error.details).toContainEqual({ field: 'sets.0.exercise_id', message: 'is not an exercise you can log' });
  });

  it('refuses a log tied to a workout or community without a live subscription (403)', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const workout = await createWorkout(t, creator, (await createProgram(t, creator, community.id)).id);
    const member = await mintMember(t);
    const byWorkout = await logWorkout(member, [{ reps: 5, load_kg: 60 }], { workout_id: workout.id });
    expect(byWorkout.statusCode).toBe(403);
    expect(json(byWorkout).error.code).toBe('forbidden');
    expect((await logWorkout(member, [{ reps: 5, load_kg: 60 }], { community_id: community.id })).statusCode).toBe(403);
  });

  it("logs a program workout for a subscribed member, and the creator sees it and its PRs — no other creator does", async () => {
    const { creator, member, communityId } = await subscribe(t, { mirror: 'reconcile' });
    const own = await createExercise(t, creator);
    const workout = await createWorkout(t, creator, (await createProgram(t, creator, communityId)).id);
    await prsOf(member, [{ reps: 5, load_kg: 60 }, { exercise_id: own.id, reps: 5, load_kg: 10 }], { workout_id: workout.id });
    const res = await logWorkout(member, [{ reps: 5, load_kg: 65 }], { workout_id: workout.id });
    expect(json(res).data).toMatchObject({ workout_id: workout.id, community_id: communityId });
    const view = createTrainingViewRepo(t.database.db);
    const executed = await view.executedWorkouts(creator.id, member.id, { offset: 0, limit: 10 });
    expect(executed).toHaveLength(2);
    expect(executed[0]).toMatchObject({ workout_id: workout.id, workout_name: 'Treino A', sets_count: 1 });
    expect(await view.countExecutedWorkouts(creator.id, member.id)).toBe(2);
    const prs = await view.personalRecords(creator.id, member.id);
    expect(prs.map((p) => p.kind).sort()).toEqual(['est_1rm', 'max_load', 'max_volume']);
    const stranger = await createCreator(t);
    expect(await view.executedWorkouts(stranger.id, member.id, { offset: 0, limit: 10 })).toEqual([]);
    expect(await view.personalRecords(stranger.id, member.id)).toEqual([]);
  });

  it('never logs a workout twice for a retried request with the same Idempotency-Key', async () => {
    const member = await mintMember(t);
    const payload = [{ reps: 5, load_kg: 60 }];
    const body = { performed_at: '2026-01-05T10:00:00.000Z' };
    const first = await logWorkout(member, payload, body, { 'idempotency-key': 'log-retry-1' });
    const retry = await logWorkout(member, payload, body, { 'idempotency-key': 'log-retry-1' });
    expect(first.statusCode).toBe(201);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    const list = json(await t.app.inject({ method: 'GET', url: '/api/v1/member/workout-logs', headers: member.headers }));
    expect(list.pagination.total).toBe(1);
  });
});
