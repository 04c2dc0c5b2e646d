import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, createMember, createProgram, createWorkout, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import { eventually, openCheckout, pay, subscriptionsOf } from '../../../test/billing-kit.js';
import {
  addMember,
  catalogExercises,
  communityWithTiers,
  getMemberRecord,
  insertLogs,
  listMembers,
  logWorkout,
  mirrorSubscription,
  onClock,
  placeIn,
} from '../../../test/members-kit.js';

/** GET /api/v1/members/:id (the member record) and GET /api/v1/members/:id/workout-logs. */
const START = new Date('2026-06-15T12:00:00Z');
let clock = START;
let t: TestApp;

beforeAll(async () => {
  // Webhooks: one test follows a subscription through the real mirror (checkout, cancel, refund).
  t = await buildTestApp({ webhooks: true, now: () => clock });
});
afterAll(async () => t.close());

const { ago, join } = onClock(() => t, () => clock);
const RECORD_KEYS = ['avatar_url', 'challenges', 'email', 'engagement', 'id', 'joined_at', 'name', 'personal_records', 'status', 'subscription_history', 'subscriptions', 'workouts'];
const WORKOUT_KEYS = ['community_id', 'created_at', 'id', 'performed_at', 'sets_count', 'workout_id', 'workout_name'];


const place = (creator: TestCreator, tierName?: string) => placeIn(t, creator, tierName);

async function record(creator: TestCreator, memberId: string) {
  const res = await getMemberRecord(t, creator, memberId);
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
}

async function workoutLogs(creator: TestCreator, memberId: string, query = '') {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/members/${memberId}/workout-logs${query}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { data: Array<Record<string, any>>; pagination: Record<string, any> };
}

describe('the member record', () => {
  it('has the list fields plus status, first join, subscription history, workouts, personal records and challenges', async () => {
    clock = START;
    const creator = await createCreator(t);
    const first = await place(creator, 'Primeira');
    const second = await place(creator, 'Segunda');
    const member = await addMember(t, { name: 'Rita Record', avatarUrl: 'https://cdn.example.com/r.png' });
    const old = await join(creator, first, member, 'canceled', 10);
    const live = await join(creator, second, member, 'active', 3);

    const data = await record(creator, member);
    expect(Object.keys(data).sort()).toEqual(RECORD_KEYS);
    const [listed] = (await listMembers(t, creator)).data;
    for (const key of ['id', 'name', 'email', 'avatar_url', 'subscriptions', 'engagement']) expect(data[key], key).toEqual(listed![key]);
    expect(data.status).toBe('active');
    expect(data.joined_at).toBe(ago(10).toISOString());
    expect(data.subscription_history.map((s: { id: string }) => s.id)).toEqual([old, live]);
    expect(data.subscription_history[0]).toMatchObject({
      id: old,
      community_id: first.communityId,
      tier_id: first.tierId,
      member_id: member,
      status: 'canceled',
      community_name: expect.any(String),
      tier_name: 'Primeira',
      created_at: ago(10).toISOString(),
      payments: [],
      refunds: [],
    });
    expect(data.subscription_history[1]).toMatchObject({ id: live, status: 'active', tier_name: 'Segunda', cancel_at_period_end: false });
    expect(data.workouts).toEqual({ data: [], total: 0, next: null });
    expect(data.personal_records).toEqual([]);
    // In no challenge (challenges/member-challenges.test.ts covers the entries).
    expect(data.challenges).toEqual([]);
    // A history entry is the subscription record plus community, tier, changes, payments and refunds.
    const sub = json(await t.app.inject({ method: 'GET', url: `/api/v1/subscriptions/${live}`, headers: creator.headers })).data;
    const added = ['community_name', 'tier_name', 'changes', 'payments', 'refunds'];
    expect(Object.fromEntries(Object.entries(data.subscription_history[1] as Record<string, unknown>).filter(([k]) => !added.includes(k)))).toEqual(sub);
  });

  it('records every change the mirror made to a subscription, oldest first', async () => {
    clock = START;
    const creator = await createCreator(t);
    const { communityId, tiers } = await communityWithTiers(t, creator, ['Basic', 'Pro']);
    const member = await addMember(t);
    const where = { communityId, tierId: tiers[0]!.id, memberId: member };
    const id = await mirrorSubscription(t, creator, where, { status: 'trialing', createdAt: ago(20) });
    await mirrorSubscription(t, creator, { ...where, id }, { status: 'active' });
    await mirrorSubscription(t, creator, { ...where, tierId: tiers[1]!.id, id }, { status: 'active' });
    await mirrorSubscription(t, creator, { ...where, tierId: tiers[1]!.id, id }, { status: 'active', cancelAtPeriodEnd: true });
    await mirrorSubscription(t, creator, { ...where, tierId: tiers[1]!.id, id }, { status: 'canceled' });

    const data = await record(creator, member);
    expect(data.status).toBe('churned');
    const [entry] = data.subscription_history;
    expect(entry.changes.map((c: Record<string, unknown>) => [c.status, c.cancel_at_period_end, c.tier_id])).toEqual([
      ['trialing', false, tiers[0]!.id],
      ['active', false, tiers[0]!.id],
      ['active', false, tiers[1]!.id],
      ['active', true, tiers[1]!.id],
      ['canceled', false, tiers[1]!.id],
    ]);
    for (const c of entry.changes) {
      expect(Object.keys(c).sort()).toEqual(['cancel_at_period_end', 'current_period_end', 'price_cents', 'recorded_at', 'status', 'tier_id']);
      expect(c.price_cents).toBe(4990);
      expect(c.recorded_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    const times = entry.changes.map((c: { recorded_at: string }) => c.recorded_at);
    expect([...times].sort()).toEqual(times);
    expect(entry.tier_name).toBe('Pro');
  });

  it('shows the cancellation reason, changes, payment and refund of a subscription paid through hosted checkout', async () => {
    clock = new Date();
    const creator = await createCreator(t);
    const { communityId, tiers } = await communityWithTiers(t, creator, ['Mensal']);
    const member = await createMember(t, { name: 'Paga Cancela' });
    const opened = await openCheckout(t, member, tiers[0]!.id);
    expect(opened.statusCode, opened.body).toBe(201);
    expect((await pay(t, json(opened).data.processor_session_id)).status).toBe(200);
    const [sub] = await subscriptionsOf(t, creator, `?member_id=${member.id}`);
    expect(sub).toBeDefined();
    await eventually(t, async () => expect((await record(creator, member.id)).subscription_history[0].payments).toHaveLength(1));

    const cancel = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${sub!.id}/cancel`, headers: creator.headers, payload: { reason: 'Mudou de cidade' } });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const refund = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${sub!.id}/refund`, headers: creator.headers, payload: { amount_cents: 300 } });
    expect(refund.statusCode, refund.body).toBe(201);
    const refunded = json(refund).data;

    await eventually(t, async () => {
      const data = await record(creator, member.id);
      expect(data.status).toBe('at_risk');
      expect(data.subscription_history).toHaveLength(1);
      const [entry] = data.subscription_history;
      expect(entry).toMatchObject({
        id: sub!.id,
        community_id: communityId,
        tier_name: 'Mensal',
        status: 'active',
        cancel_at_period_end: true,
        cancellation_reason: 'Mudou de cidade',
      });
      expect(entry.payments).toEqual([{ id: expect.any(String), amount_cents: 1000, currency: expect.any(String), paid_at: expect.any(String) }]);
      expect(entry.refunds).toEqual([{ id: refunded.id, amount_cents: 300, currency: entry.payments[0].currency, status: refunded.status, created_at: refunded.created_at }]);
      const states = entry.changes.map((c: Record<string, unknown>) => `${c.status}${c.cancel_at_period_end ? '+cancel' : ''}`);
      expect(states).toEqual(['active', 'active+cancel']);
      expect(entry.changes.at(-1).current_period_end).toBe(entry.current_period_end);
    });

    // Canceled now: churned, and the history says so.
    const now = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${sub!.id}/cancel`, headers: creator.headers, payload: { immediate: true } });
    expect(now.statusCode, now.body).toBe(200);
    await eventually(t, async () => {
      const data = await record(creator, member.id);
      expect(data.status).toBe('churned');
      const [entry] = data.subscription_history;
      expect(entry.status).toBe('canceled');
      expect(entry.cancellation_reason).toBe('Mudou de cidade');
      expect(entry.changes.at(-1).status).toBe('canceled');
      expect(data.subscriptions).toEqual([expect.objectContaining({ tier_name: 'Mensal', status: 'canceled' })]);
    });
  });
});

describe('executed workouts', () => {
  it('carries the 20 newest with the path to the rest, which the workout-logs route pages through', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator, 'Treino');
    const program = await createProgram(t, creator, at.communityId);
    const workout = await createWorkout(t, creator, program.id, { name: 'Treino A' });
    const other = await createCreator(t);
    const elsewhere = await place(other, 'Outro');
    const member = await createMember(t);
    await join(creator, at, member.id, 'active', 40);
    await mirrorSubscription(t, other, { ...elsewhere, memberId: member.id }, { status: 'active', createdAt: ago(40) });
    const [e1, e2] = await catalogExercises(t, 2);

    // 23 logs here, oldest first; two share a time (ties by id, newest id first), one follows the program workout.
    const hours = (h: number) => new Date(clock.getTime() - h * 3_600_000);
    const logged: Array<{ id: string; performed_at: string; sets: number }> = [];
    for (let i = 0; i < 23; i++) {
      const at_ = i === 11 ? hours(23 - 10) : hours(23 - i);
      const sets = (i % 3) + 1;
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/member/workout-logs',
        headers: member.headers,
        payload: {
          ...(i === 5 ? { workout_id: workout.id } : { community_id: at.communityId }),
          performed_at: at_.toISOString(),
          sets: Array.from({ length: sets }, (_, k) => ({ exercise_id: k % 2 ? e2 : e1, reps: 5, load_kg: 20 })),
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      logged.push({ id: json(res).data.id, performed_at: at_.toISOString(), sets });
    }
    // Newer logs that are not this creator's: personal, and in another creator's community.
    await logWorkout(t, member, { performedAt: clock }, e1);
    await logWorkout(t, member, { communityId: elsewhere.communityId, performedAt: clock }, e1);

    const expected = [...logged].sort((x, y) => (x.performed_at === y.performed_at ? (x.id < y.id ? 1 : -1) : x.performed_at < y.performed_at ? 1 : -1));
    const data = await record(creator, member.id);
    expect(data.workouts.total).toBe(23);
    expect(data.workouts.next).toBe(`/api/v1/members/${member.id}/workout-logs?page=2&limit=20`);
    expect(data.workouts.data.map((w: { id: string }) => w.id)).toEqual(expected.slice(0, 20).map((l) => l.id));
    for (const w of data.workouts.data) {
      expect(Object.keys(w).sort()).toEqual(WORKOUT_KEYS);
      expect(w.community_id).toBe(at.communityId);
      const mine = logged.find((l) => l.id === w.id)!;
      expect(w.performed_at).toBe(mine.performed_at);
      expect(w.sets_count).toBe(mine.sets);
      expect(w.created_at).toBe(START.toISOString());
    }
    const followed = data.workouts.data.find((w: { id: string }) => w.id === logged[5]!.id);
    expect(followed).toMatchObject({ workout_id: workout.id, workout_name: 'Treino A', community_id: at.communityId });
    expect(data.workouts.data.find((w: { id: string }) => w.id === logged[6]!.id)).toMatchObject({ workout_id: null, workout_name: null });

    const page2 = await workoutLogs(creator, member.id, data.workouts.next.replace(`/api/v1/members/${member.id}/workout-logs`, ''));
    expect(page2.pagination).toEqual({ page: 2, limit: 20, total: 23, pages: 2 });
    expect(page2.data.map((w) => w.id)).toEqual(expected.slice(20).map((l) => l.id));
    const page1 = await workoutLogs(creator, member.id);
    expect(page1.data).toEqual(data.workouts.data);
    expect(page1.pagination).toEqual({ page: 1, limit: 20, total: 23, pages: 2 });
    const small: string[] = [];
    for (let page = 1; page <= 5; page++) small.push(...(await workoutLogs(creator, member.id, `?limit=5&page=${page}`)).data.map((w) => w.id));
    expect(small).toEqual(expected.map((l) => l.id));
    expect((await workoutLogs(creator, member.id, '?page=9')).data).toEqual([]);
    // The other creator sees only their one log.
    const theirs = await record(other, member.id);
    expect(theirs.workouts.total).toBe(1);
    expect(theirs.workouts.data.map((w: { community_id: string }) => w.community_id)).toEqual([elsewhere.communityId]);
  });

  it('gives no next page at exactly 20 workouts, and one at 21', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator);
    const twenty = await addMember(t);
    const twentyOne = await addMember(t);
    for (const [member, n] of [[twenty, 20], [twentyOne, 21]] as const) {
      await join(creator, at, member, 'active', 60);
      await insertLogs(t, member, Array.from({ length: n }, (_, i) => ({ creatorId: creator.id, communityId: at.communityId, performedAt: ago(i + 1) })));
      // A personal log is never one of them.
      await insertLogs(t, member, [{ creatorId: null, communityId: null, performedAt: ago(0) }]);
    }
    expect((await record(creator, twenty)).workouts).toMatchObject({ total: 20, next: null });
    expect((await record(creator, twenty)).workouts.data).toHaveLength(20);
    const more = (await record(creator, twentyOne)).workouts;
    expect(more).toMatchObject({ total: 21, next: `/api/v1/members/${twentyOne}/workout-logs?page=2&limit=20` });
    expect(more.data).toHaveLength(20);
    expect((await workoutLogs(creator, twentyOne, '?page=2')).data).toHaveLength(1);
  });

  it('refuses bad paging on the workout-logs route with a 400 naming the parameter', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator);
    const member = await addMember(t);
    await join(creator, at, member, 'active', 1);
    for (const [query, field] of [
      ['?limit=101', 'limit'],
      ['?limit=0', 'limit'],
      ['?page=0', 'page'],
      ['?page=10001', 'page'],
      ['?sort=performed_at', 'sort'],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/members/${member}/workout-logs${query}`, headers: creator.headers });
      expect(res.statusCode, query).toBe(400);
      expect(json(res).error.details.map((d: { field: string }) => d.field), query).toContain(field);
    }
  });
});

describe('personal records', () => {
  it('shows only records set in this creator’s communities that beat an earlier set, and drops one beaten elsewhere', async () => {
    clock = START;
    const alpha = await createCreator(t);
    const beta = await createCreator(t);
    const a = await place(alpha, 'Alpha');
    const b = await place(beta, 'Beta');
    const member = await createMember(t);
    await join(alpha, a, member.id, 'active', 30);
    await mirrorSubscription(t, beta, { ...b, memberId: member.id }, { status: 'active', createdAt: ago(30) });
    const [bench, squat, row, curl] = await catalogExercises(t, 4);
    const log = (communityId: string | undefined, exercise: string, load: number, daysAgo: number) =>
      logWorkout(t, member, { ...(communityId ? { communityId } : {}), performedAt: ago(daysAgo), sets: [{ exercise_id: exercise, reps: 5, load_kg: load }] });

    await log(a.communityId, bench!, 50, 10); // baseline
    const benchPr = await log(a.communityId, bench!, 60, 9); // PR in alpha
    await log(b.communityId, squat!, 40, 8); // baseline in beta
    const squatPr = await log(b.communityId, squat!, 45, 7); // PR in beta
    await log(a.communityId, row!, 30, 6); // baseline
    await log(a.communityId, row!, 35, 5); // PR in alpha...
    await log(undefined, row!, 40, 4); // ...beaten in a personal log
    await log(a.communityId, curl!, 20, 3); // a baseline only

    const alphaPrs = (await record(alpha, member.id)).personal_records;
    const summary = (prs: Array<Record<string, any>>) => prs.map((p) => `${p.exercise_id === bench ? 'bench' : p.exercise_id === squat ? 'squat' : p.exercise_id === row ? 'row' : 'curl'} ${p.kind} ${p.value} ${p.previous_value}`).sort();
    expect(summary(alphaPrs)).toEqual(['bench est_1rm 70 58.33', 'bench max_load 60 50', 'bench max_volume 300 250']);
    for (const pr of alphaPrs) {
      expect(Object.keys(pr).sort()).toEqual(['exercise_id', 'exercise_name', 'kind', 'log_id', 'performed_at', 'previous_value', 'value']);
      expect(pr).toMatchObject({ log_id: benchPr.id, performed_at: ago(9).toISOString(), exercise_name: expect.any(String) });
    }
    const betaPrs = (await record(beta, member.id)).personal_records;
    expect(summary(betaPrs)).toEqual(['squat est_1rm 52.5 46.67', 'squat max_load 45 40', 'squat max_volume 225 200']);
    for (const pr of betaPrs) expect(pr.log_id).toBe(squatPr.id);
  });

  it('lists records newest first', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator);
    const member = await createMember(t);
    await join(creator, at, member.id, 'active', 30);
    const [x, y] = await catalogExercises(t, 2);
    const log = (exercise: string, load: number, reps: number, daysAgo: number) =>
      logWorkout(t, member, { communityId: at.communityId, performedAt: ago(daysAgo), sets: [{ exercise_id: exercise, reps, load_kg: load }] });
    await log(x!, 50, 5, 10);
    await log(y!, 50, 5, 9);
    await log(x!, 50, 8, 8); // x: est_1rm, max_volume, max_reps
    await log(y!, 55, 5, 7); // y: max_load, est_1rm, max_volume
    const prs = (await record(creator, member.id)).personal_records as Array<{ performed_at: string; exercise_id: string }>;
    expect(prs.length).toBe(6);
    expect(prs.map((p) => p.performed_at)).toEqual([...Array(3).fill(ago(7).toISOString()), ...Array(3).fill(ago(8).toISOString())]);
  });
});

describe('who may see a record', () => {
  it('is 404 for a member of another creator, an unknown id and someone who never subscribed, on both routes, alike', async () => {
    clock = START;
    const alpha = await createCreator(t);
    const beta = await createCreator(t);
    const b = await place(beta);
    const theirs = await addMember(t);
    await join(beta, b, theirs, 'active', 2);
    const nobody = await addMember(t);
    const bodies: string[] = [];
    for (const id of [theirs, nobody, '0190a0b0-0000-7000-8000-000000000000']) {
      for (const url of [`/api/v1/members/${id}`, `/api/v1/members/${id}/workout-logs`]) {
        const res = await t.app.inject({ method: 'GET', url, headers: alpha.headers });
        expect(res.statusCode, url).toBe(404);
        expect(json(res)).toMatchObject({ success: false, error: { code: 'not_found' } });
        bodies.push(json(res).error.message);
      }
    }
    // Existence is never revealed: the same answer whoever the id belongs to.
    expect(new Set(bodies.filter((_, i) => i % 2 === 0)).size).toBe(1);
    expect(new Set(bodies.filter((_, i) => i % 2 === 1)).size).toBe(1);
    expect((await getMemberRecord(t, beta, theirs)).statusCode).toBe(200);
  });

  it('is 400 for an id that is not a UUID and 401 without a key', async () => {
    const creator = await createCreator(t);
    for (const url of ['/api/v1/members/not-a-uuid', '/api/v1/members/123/workout-logs']) {
      const res = await t.app.inject({ method: 'GET', url, headers: creator.headers });
      expect(res.statusCode, url).toBe(400);
      expect(json(res).error.details.map((d: { field: string }) => d.field)).toContain('id');
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/members/0190a0b0-0000-7000-8000-000000000000' })).statusCode).toBe(401);
  });

  it('still shows a member who churned, with their whole history', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator);
    const member = await addMember(t);
    await join(creator, at, member, 'canceled', 300);
    const data = await record(creator, member);
    expect(data.status).toBe('churned');
    expect(data.subscription_history).toHaveLength(1);
    // The id in capitals is the same member.
    const upper = await getMemberRecord(t, creator, member.toUpperCase());
    expect(upper.statusCode, upper.body).toBe(200);
    expect(json(upper).data.id).toBe(member);
  });

  it('shows each creator of a shared member only their subscriptions, workouts and engagement', async () => {
    clock = START;
    const alpha = await createCreator(t);
    const beta = await createCreator(t);
    const a = await place(alpha, 'Alpha');
    const b = await place(beta, 'Beta');
    const member = await createMember(t);
    const alphaSub = await join(alpha, a, member.id, 'active', 12);
    const betaSub = await mirrorSubscription(t, beta, { ...b, memberId: member.id }, { status: 'trialing', createdAt: ago(4) });
    const [exercise] = await catalogExercises(t, 1);
    const inBeta = await logWorkout(t, member, { communityId: b.communityId, performedAt: ago(0) }, exercise);
    await logWorkout(t, member, { performedAt: ago(0) }, exercise);

    const seenByAlpha = await record(alpha, member.id);
    expect(seenByAlpha.subscription_history.map((s: { id: string }) => s.id)).toEqual([alphaSub]);
    expect(seenByAlpha.subscriptions.map((s: { community_id: string }) => s.community_id)).toEqual([a.communityId]);
    expect(seenByAlpha.workouts).toEqual({ data: [], total: 0, next: null });
    expect(seenByAlpha.engagement).toEqual({ last_active_at: null, workouts_completed_30d: 0, posts_count_30d: 0, streak_days: 0 });
    expect(seenByAlpha).toMatchObject({ status: 'active', joined_at: ago(12).toISOString() });
    expect((await workoutLogs(alpha, member.id)).pagination.total).toBe(0);

    const seenByBeta = await record(beta, member.id);
    expect(seenByBeta.subscription_history.map((s: { id: string }) => s.id)).toEqual([betaSub]);
    expect(seenByBeta.workouts.data.map((w: { id: string }) => w.id)).toEqual([inBeta.id]);
    expect(seenByBeta.engagement).toMatchObject({ last_active_at: START.toISOString(), workouts_completed_30d: 1, streak_days: 1 });
    expect(seenByBeta).toMatchObject({ status: 'trial', joined_at: ago(4).toISOString() });
  });
});
