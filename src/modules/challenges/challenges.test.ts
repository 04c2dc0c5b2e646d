import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, createExercise, json, type TestApp } from '../../../test/helpers.js';
import { createChallenge, joined, leaderboard, postChallenge, subscribedMember } from '../../../test/challenges-kit.js';
import { catalogExercises, communityWithTiers, DAY_MS, logWorkout, placeIn } from '../../../test/members-kit.js';

/** The creator's challenge API: settings and their validation, status, cancel, another creator's 404. */
const START = new Date('2026-03-10T12:00:00Z');
let clock = START;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const inDays = (days: number) => new Date(clock.getTime() + days * DAY_MS);

describe('creating a challenge', () => {
  it('answers 201 with the settings, the derived end and status, and no participants', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const data = await createChallenge(t, creator, { community_id: place.communityId, name: '  Março Forte ', description: 'Log every day.', starts_at: inDays(2), duration_days: 30 });
    expect(data).toMatchObject({
      community_id: place.communityId,
      name: 'Março Forte',
      description: 'Log every day.',
      metric: 'workouts_count',
      exercise_id: null,
      duration_days: 30,
      starts_at: inDays(2).toISOString(),
      ends_at: inDays(32).toISOString(),
      tier_min_id: null,
      status: 'scheduled',
      participants_count: 0,
      canceled_at: null,
      warnings: [],
    });
  });

  it('accepts a duration outside 21–90 days with a warning, and refuses one outside 1–365', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const short = await createChallenge(t, creator, { community_id: place.communityId, starts_at: inDays(1), duration_days: 7 });
    expect(short.warnings).toEqual([expect.objectContaining({ field: 'duration_days', message: expect.stringContaining('21 to 90') })]);
    const long = await createChallenge(t, creator, { community_id: place.communityId, starts_at: inDays(1), duration_days: 120 });
    expect(long.warnings).toHaveLength(1);
    for (const duration_days of [0, 366]) {
      const res = await postChallenge(t, creator, { community_id: place.communityId, starts_at: inDays(1), duration_days });
      expect(res.statusCode).toBe(400);
    }
  });

  it('requires exercise_id with workouts_with_exercise only, and an exercise the creator can use', async () => {
    clock = START;
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const place = await placeIn(t, creator);
    const [catalog] = await catalogExercises(t, 1);
    const foreign = await createExercise(t, other);
    const own = await createExercise(t, creator);
    const base = { community_id: place.communityId, starts_at: inDays(1) };

    const missing = await postChallenge(t, creator, { ...base, metric: 'workouts_with_exercise' });
    expect(missing.statusCode).toBe(400);
    expect(json(missing).error.details).toEqual([{ field: 'exercise_id', message: 'is required with the metric workouts_with_exercise' }]);
    const extra = await postChallenge(t, creator, { ...base, metric: 'volume_kg', exercise_id: catalog });
    expect(json(extra).error.details).toEqual([{ field: 'exercise_id', message: 'is only allowed with the metric workouts_with_exercise' }]);
    const theirs = await postChallenge(t, creator, { ...base, metric: 'workouts_with_exercise', exercise_id: foreign.id });
    expect(json(theirs).error.details).toEqual([{ field: 'exercise_id', message: 'is not a catalog exercise nor one of yours' }]);
    expect((await postChallenge(t, creator, { ...base, metric: 'bench_press' as never })).statusCode).toBe(400);

    expect((await createChallenge(t, creator, { ...base, metric: 'workouts_with_exercise', exercise_id: catalog })).exercise_id).toBe(catalog);
    expect((await createChallenge(t, creator, { ...base, metric: 'workouts_with_exercise', exercise_id: own.id })).exercise_id).toBe(own.id);
  });

  it("takes a minimum tier of the same community only, active, and refuses another creator's or a paused community", async () => {
    clock = START;
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const { communityId, tiers } = await communityWithTiers(t, creator, ['Basic', 'Pro']);
    const elsewhere = await placeIn(t, creator);
    const base = { community_id: communityId, starts_at: inDays(1) };

    expect((await createChallenge(t, creator, { ...base, tier_min_id: tiers[1]!.id })).tier_min_id).toBe(tiers[1]!.id);
    const wrong = await postChallenge(t, creator, { ...base, tier_min_id: elsewhere.tierId });
    expect(json(wrong).error.details).toEqual([{ field: 'tier_min_id', message: "is not a tier of the challenge's community" }]);

    await t.app.inject({ method: 'PATCH', url: `/api/v1/tiers/${tiers[0]!.id}`, headers: creator.headers, payload: { is_active: false } });
    const inactive = await postChallenge(t, creator, { ...base, tier_min_id: tiers[0]!.id });
    expect(inactive.statusCode).toBe(409);
    expect(json(inactive).error.code).toBe('tier_inactive');

    const foreign = await postChallenge(t, other, base);
    expect(foreign.statusCode).toBe(404);

    await t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${communityId}`, headers: creator.headers });
    const paused = await postChallenge(t, creator, base);
    expect(paused.statusCode).toBe(409);
    expect(json(paused).error.code).toBe('community_paused');
  });
});

describe('reading, changing and canceling', () => {
  it('derives the status from the clock and filters the list by it and by community', async () => {
    clock = START;
    const creator = await createCreator(t);
    const a = await placeIn(t, creator);
    const b = await placeIn(t, creator);
    const scheduled = await createChallenge(t, creator, { community_id: a.communityId, starts_at: inDays(1) });
    const running = await createChallenge(t, creator, { community_id: a.communityId, starts_at: inDays(-1) });
    const finished = await createChallenge(t, creator, { community_id: b.communityId, starts_at: inDays(-40), duration_days: 30 });
    const canceled = await createChallenge(t, creator, { community_id: b.communityId, starts_at: inDays(3) });
    await t.app.inject({ method: 'POST', url: `/api/v1/challenges/${canceled.id}/cancel`, headers: creator.headers });

    const list = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/challenges${query}`, headers: creator.headers });
      expect(res.statusCode, res.body).toBe(200);
      return json(res) as { data: Array<{ id: string; status: string }>; pagination: { total: number } };
    };
    const all = await list('');
    expect(all.data.map((c) => c.id)).toEqual([canceled.id, scheduled.id, running.id, finished.id]);
    expect(all.data.map((c) => c.status)).toEqual(['canceled', 'scheduled', 'running', 'finished']);
    for (const [status, id] of [['scheduled', scheduled.id], ['running', running.id], ['finished', finished.id], ['canceled', canceled.id]] as const) {
      const page = await list(`?status=${status}`);
      expect(page.data.map((c) => c.id), status).toEqual([id]);
      expect(page.pagination.total).toBe(1);
    }
    expect((await list(`?community_id=${b.communityId}`)).data.map((c) => c.id)).toEqual([canceled.id, finished.id]);

    clock = inDays(2);
    expect((await list('?status=running')).data.map((c) => c.id)).toEqual([scheduled.id, running.id]);
  });

  it('changes name and description any time, and the scoring settings only before the start', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, starts_at: inDays(1) });
    const patch = (payload: object) => t.app.inject({ method: 'PATCH', url: `/api/v1/challenges/${challenge.id}`, headers: creator.headers, payload });

    const moved = await patch({ starts_at: inDays(5).toISOString(), duration_days: 14, metric: 'volume_kg' });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(json(moved).data).toMatchObject({ starts_at: inDays(5).toISOString(), ends_at: inDays(19).toISOString(), metric: 'volume_kg', warnings: [expect.any(Object)] });
    expect((await patch({ starts_at: inDays(-1).toISOString() })).statusCode).toBe(400);

    clock = inDays(6);
    const late = await patch({ duration_days: 30 });
    expect(late.statusCode).toBe(409);
    expect(json(late).error.message).toContain('running');
    const renamed = await patch({ name: 'Renamed', description: 'New rules' });
    expect(json(renamed).data).toMatchObject({ name: 'Renamed', description: 'New rules', duration_days: 14 });
    const nothing = await patch({});
    expect(nothing.statusCode, nothing.body).toBe(200);
    expect(json(nothing).data).toEqual(json(renamed).data);
  });

  it('cancels once, freezing scores and refusing joins, and refuses to cancel a finished challenge', async () => {
    clock = START;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const member = await subscribedMember(t, creator, place);
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, starts_at: inDays(-1) });
    await joined(t, member, challenge.id);
    await logWorkout(t, member, { performedAt: clock });

    const cancel = () => t.app.inject({ method: 'POST', url: `/api/v1/challenges/${challenge.id}/cancel`, headers: creator.headers });
    const first = await cancel();
    expect(first.statusCode, first.body).toBe(200);
    expect(json(first).data).toMatchObject({ status: 'canceled', canceled_at: clock.toISOString() });
    expect(json(await cancel()).data.canceled_at).toBe(clock.toISOString());

    await logWorkout(t, member, { performedAt: clock });
    expect((await leaderboard(t, creator, challenge.id)).data.rankings.map((r) => r.score)).toEqual([1]);
    const rejoin = await t.app.inject({ method: 'POST', url: `/api/v1/member/challenges/${challenge.id}/join`, headers: member.headers });
    expect(rejoin.statusCode).toBe(409);

    const finished = await createChallenge(t, creator, { community_id: place.communityId, starts_at: inDays(-40) });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/challenges/${finished.id}/cancel`, headers: creator.headers });
    expect(res.statusCode).toBe(409);
  });

  it("answers 404 for another creator's challenge on every route", async () => {
    clock = START;
    const owner = await createCreator(t);
    const other = await createCreator(t);
    const place = await placeIn(t, owner);
    const challenge = await createChallenge(t, owner, { community_id: place.communityId, starts_at: inDays(1) });
    const routes = [
      { method: 'GET', url: `/api/v1/challenges/${challenge.id}` },
      { method: 'PATCH', url: `/api/v1/challenges/${challenge.id}`, payload: { name: 'Mine now' } },
      { method: 'POST', url: `/api/v1/challenges/${challenge.id}/cancel` },
      { method: 'GET', url: `/api/v1/challenges/${challenge.id}/leaderboard` },
    ] as const;
    for (const route of routes) {
      const res = await t.app.inject({ ...route, headers: other.headers });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(404);
    }
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/challenges', headers: other.headers });
    expect(json(list).data).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/challenges/${challenge.id}`, headers: owner.headers })).statusCode).toBe(200);
  });
});
