import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, json, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { createChallenge, joined, joinChallenge, leaderboard, subscribedMember } from '../../../test/challenges-kit.js';
import { catalogExercises, DAY_MS, mirrorSubscription, placeIn, type Place } from '../../../test/members-kit.js';

/**
 * Challenge scores (scores.ts) through the API: each metric on hand-computed histories, the
 * window's edges, joining, deleting and back-dating (the logging statement's fast path and
 * the replay path), ties, canceled challenges, and random histories against a plain model.
 */
const T = new Date('2033-05-20T12:00:00Z');
let clock = T;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const METRICS = ['workouts_count', 'workouts_with_exercise', 'volume_kg', 'streak_days'] as const;
type Metric = (typeof METRICS)[number];
type SetIn = { exercise_id: string; reps: number; load_kg?: number; is_warmup?: boolean };
const at = (iso: string) => new Date(iso);

/** Logs through the member API (201 expected); returns the log's id. */
async function log(member: TestMember, performedAt: Date, sets: SetIn[], communityId?: string) {
  const payload = { performed_at: performedAt.toISOString(), sets, ...(communityId ? { community_id: communityId } : {}) };
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/member/workout-logs', headers: member.headers, payload });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data.id as string;
}

async function unlog(member: TestMember, id: string) {
  const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/member/workout-logs/${id}`, headers: member.headers });
  expect(res.statusCode, res.body).toBe(200);
}

async function post(creatorOrMember: { headers: { authorization: string } }, url: string) {
  return t.app.inject({ method: 'POST', url, headers: creatorOrMember.headers });
}

/** One challenge per metric over [startsAt, startsAt + days), the exercise one counting `exerciseId`. */
async function fourChallenges(creator: TestCreator, place: Place, startsAt: Date, days: number, exerciseId: string) {
  const ids = {} as Record<Metric, string>;
  for (const metric of METRICS) {
    const exercise = metric === 'workouts_with_exercise' ? { exercise_id: exerciseId } : {};
    ids[metric] = (await createChallenge(t, creator, { community_id: place.communityId, metric, ...exercise, starts_at: startsAt, duration_days: days })).id;
  }
  return ids;
}

/** A new creator and member, the member in one challenge per metric from 2033-05-01 12:00 for 30 days (the exercise one on the first of `exercises` catalog exercises). */
async function memberInFour(exercises: number) {
  const creator = await createCreator(t);
  const place = await placeIn(t, creator);
  const member = await subscribedMember(t, creator, place);
  const picked = await catalogExercises(t, exercises);
  const ids = await fourChallenges(creator, place, at('2033-05-01T12:00:00Z'), 30, picked[0]!);
  for (const id of Object.values(ids)) await joined(t, member, id);
  return { creator, member, ids, exercises: picked };
}

/** The member's score in each challenge, from the creator's board (undefined: not on it). */
async function scoresIn(creator: TestCreator, ids: Record<Metric, string>, memberId: string) {
  const out = {} as Record<Metric, number | undefined>;
  for (const metric of METRICS) out[metric] = (await leaderboard(t, creator, ids[metric], '?limit=100')).data.rankings.find((r) => r.member_id === memberId)?.score;
  return out;
}

const boardOf = async (creator: TestCreator, id: string) => (await leaderboard(t, creator, id, '?limit=100')).data.rankings.map((r) => [r.member_id, r.score]);

describe('scoring each metric', () => {
  it('counts logs, logs with the exercise (warm-ups too), working volume and the longest run of UTC days', async () => {
    clock = T;
    const { creator, member, ids, exercises } = await memberInFour(2);
    const [a, b] = exercises as [string, string];

    await log(member, at('2033-05-02T08:00:00Z'), [{ exercise_id: a, reps: 10, load_kg: 10, is_warmup: true }, { exercise_id: a, reps: 5, load_kg: 20 }, { exercise_id: a, reps: 3, load_kg: 22.5 }]);
    await log(member, at('2033-05-03T23:59:59Z'), [{ exercise_id: b, reps: 8, load_kg: 50 }]);
    await log(member, at('2033-05-04T00:00:01Z'), [{ exercise_id: b, reps: 10 }, { exercise_id: a, reps: 12, load_kg: 15, is_warmup: true }]);
    await log(member, at('2033-05-07T10:00:00Z'), [{ exercise_id: b, reps: 2, load_kg: 100 }]);

    // volume: (5×20 + 3×22.5) + 8×50 + 10×0 + 2×100 = 167.5 + 400 + 0 + 200; streak: 2nd, 3rd, 4th of May, then the 7th alone.
    expect(await scoresIn(creator, ids, member.id)).toEqual({ workouts_count: 4, workouts_with_exercise: 2, volume_kg: 767.5, streak_days: 3 });
  });

  it('counts a log at starts_at and at ends_at − 1 s, not one a second before the start nor one at ends_at, on every path', async () => {
    clock = at('2033-05-11T23:58:00Z'); // ends_at − 2 min: a log at ends_at is within the 5 minutes allowed ahead
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const [a] = (await catalogExercises(t, 1)) as [string];
    // Midnight to midnight, so each edge log falls on a day of its own: the streak tells them apart too.
    const start = at('2033-05-10T00:00:00Z');
    const end = at('2033-05-12T00:00:00Z');
    const ids = await fourChallenges(creator, place, start, 2, a);
    // Loads 1, 10, 100 and 1000 kg tell in the volume which of the four logs counted.
    const edges: Array<[Date, number]> = [[new Date(start.getTime() - 1000), 1], [start, 10], [new Date(end.getTime() - 1000), 100], [end, 1000]];
    const logAll = async (m: TestMember, order: Array<[Date, number]>) => {
      for (const [when, load] of order) await log(m, when, [{ exercise_id: a, reps: 1, load_kg: load }]);
    };
    const joinAll = async (m: TestMember) => {
      for (const id of Object.values(ids)) await joined(t, m, id);
    };
    const live = await subscribedMember(t, creator, place); // joins, then logs in order (the logging statement)
    await joinAll(live);
    await logAll(live, edges);
    const before = await subscribedMember(t, creator, place); // logs, then joins (the join's recomputation)
    await logAll(before, edges);
    await joinAll(before);
    const replayed = await subscribedMember(t, creator, place); // joins, then logs newest first (each one back-dated: the replay)
    await joinAll(replayed);
    await logAll(replayed, [...edges].reverse());

    for (const m of [live, before, replayed]) {
      expect(await scoresIn(creator, ids, m.id)).toEqual({ workouts_count: 2, workouts_with_exercise: 2, volume_kg: 110, streak_days: 2 });
    }
  });
});

describe('whose logs count', () => {
  it("counts logs made before joining, personal ones and ones in another creator's community, and recomputes on re-joining", async () => {
    clock = T;
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const place = await placeIn(t, creator);
    const elsewhere = await placeIn(t, other);
    const member = await subscribedMember(t, creator, place);
    await mirrorSubscription(t, other, { ...elsewhere, memberId: member.id }, { status: 'active' });
    const [a] = (await catalogExercises(t, 1)) as [string];
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, starts_at: at('2033-05-01T12:00:00Z'), duration_days: 30 });
    const set = [{ exercise_id: a, reps: 5, load_kg: 20 }];

    const inCommunity = await log(member, at('2033-05-02T10:00:00Z'), set, place.communityId);
    await log(member, at('2033-05-03T10:00:00Z'), set);
    await log(member, at('2033-05-04T10:00:00Z'), set, elsewhere.communityId);
    await log(member, at('2033-04-30T10:00:00Z'), set); // before the window
    expect((await joined(t, member, challenge.id)).score).toBe(3);

    expect((await post(member, `/api/v1/member/challenges/${challenge.id}/leave`)).statusCode).toBe(200);
    expect(await boardOf(creator, challenge.id)).toEqual([]);
    await unlog(member, inCommunity);
    await log(member, at('2033-05-05T10:00:00Z'), set);
    await log(member, at('2033-05-06T10:00:00Z'), set, place.communityId);
    expect((await joined(t, member, challenge.id)).score).toBe(4);
    expect(await boardOf(creator, challenge.id)).toEqual([[member.id, 4]]);
  });
});

describe('changing history', () => {
  it('moves all four metrics on deleting a log and on back-dating one, by the fast path and by the replay', async () => {
    clock = T;
    const { creator, member, ids, exercises } = await memberInFour(3);
    const [a, b, c] = exercises as [string, string, string];
    const scores = () => scoresIn(creator, ids, member.id);

    await log(member, at('2033-05-02T09:00:00Z'), [{ exercise_id: a, reps: 5, load_kg: 20 }]); // 100
    const middle = await log(member, at('2033-05-03T09:00:00Z'), [{ exercise_id: a, reps: 3, load_kg: 30 }, { exercise_id: b, reps: 10, load_kg: 10 }]); // 190
    await log(member, at('2033-05-04T09:00:00Z'), [{ exercise_id: b, reps: 5, load_kg: 40 }]); // 200
    await log(member, at('2033-05-06T09:00:00Z'), [{ exercise_id: b, reps: 2, load_kg: 50 }]); // 100
    expect(await scores()).toEqual({ workouts_count: 4, workouts_with_exercise: 2, volume_kg: 590, streak_days: 3 });

    // The 3rd of May's only log goes: the run 2nd–4th breaks.
    await unlog(member, middle);
    expect(await scores()).toEqual({ workouts_count: 3, workouts_with_exercise: 1, volume_kg: 400, streak_days: 1 });

    // Back-dated, but no later working set of A or C: the logging statement writes and scores it. 4×25 = 100; the warm-up weighs nothing.
    await log(member, at('2033-05-03T10:00:00Z'), [{ exercise_id: a, reps: 10, load_kg: 10, is_warmup: true }, { exercise_id: c, reps: 4, load_kg: 25 }]);
    expect(await scores()).toEqual({ workouts_count: 4, workouts_with_exercise: 2, volume_kg: 500, streak_days: 3 });

    // B was done later (the 6th): replayed under the history lock. 1×7.5; the 2nd–6th are now all logged.
    const replayed = await log(member, at('2033-05-05T09:00:00Z'), [{ exercise_id: b, reps: 1, load_kg: 7.5 }, { exercise_id: a, reps: 1, load_kg: 1, is_warmup: true }]);
    expect(await scores()).toEqual({ workouts_count: 5, workouts_with_exercise: 3, volume_kg: 507.5, streak_days: 5 });

    await unlog(member, replayed);
    expect(await scores()).toEqual({ workouts_count: 4, workouts_with_exercise: 2, volume_kg: 500, streak_days: 3 });
  });
});

describe('ranking', () => {
  it('ranks equal scores by who reached them first in their training, then zero scores by who joined first', async () => {
    clock = T;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    // Made in this order, so their ids (time-ordered) rank them in it when nothing else does.
    const [x, y, w, z] = [await subscribedMember(t, creator, place), await subscribedMember(t, creator, place), await subscribedMember(t, creator, place), await subscribedMember(t, creator, place)];
    const [a, b] = (await catalogExercises(t, 2)) as [string, string];
    const base = { community_id: place.communityId, starts_at: at('2033-05-01T12:00:00Z'), duration_days: 30 };
    const count = await createChallenge(t, creator, base);
    const streak = await createChallenge(t, creator, { ...base, metric: 'streak_days' });
    const withA = await createChallenge(t, creator, { ...base, metric: 'workouts_with_exercise', exercise_id: a });
    for (const m of [x, y]) for (const c of [count, streak, withA]) await joined(t, m, c.id);

    // x logs first, on the 3rd (A) and the 5th (B); y logs afterwards, on the 2nd (B) and the 4th (A).
    await log(x, at('2033-05-03T09:00:00Z'), [{ exercise_id: a, reps: 5 }]);
    await log(x, at('2033-05-05T09:00:00Z'), [{ exercise_id: b, reps: 5 }]);
    await log(y, at('2033-05-02T09:00:00Z'), [{ exercise_id: b, reps: 5 }]);
    await log(y, at('2033-05-04T09:00:00Z'), [{ exercise_id: a, reps: 5 }]);
    clock = new Date(T.getTime() + 60_000);
    await joined(t, z, count.id);
    clock = new Date(T.getTime() + 120_000);
    await joined(t, w, count.id);

    const board = async (id: string) => (await leaderboard(t, creator, id)).data.rankings.map((r) => [r.rank, r.member_id, r.score]);
    expect(await board(count.id)).toEqual([[1, y.id, 2], [2, x.id, 2], [3, z.id, 0], [4, w.id, 0]]); // 4th of May before the 5th
    expect(await board(streak.id)).toEqual([[1, y.id, 1], [2, x.id, 1]]); // a 1-day run on the 2nd before one on the 3rd
    expect(await board(withA.id)).toEqual([[1, x.id, 1], [2, y.id, 1]]); // x's log of B on the 5th does not count: x got there on the 3rd
  });
});

describe('canceled challenges', () => {
  it('freezes the scores: later logs, back-dated ones and deletions move nothing', async () => {
    clock = T;
    const { creator, member, ids, exercises } = await memberInFour(2);
    const [a, b] = exercises as [string, string];
    const first = await log(member, at('2033-05-03T09:00:00Z'), [{ exercise_id: a, reps: 5, load_kg: 20 }]);
    const frozen = { workouts_count: 1, workouts_with_exercise: 1, volume_kg: 100, streak_days: 1 };
    expect(await scoresIn(creator, ids, member.id)).toEqual(frozen);

    for (const id of Object.values(ids)) expect((await post(creator, `/api/v1/challenges/${id}/cancel`)).statusCode).toBe(200);
    await log(member, at('2033-05-04T09:00:00Z'), [{ exercise_id: b, reps: 5, load_kg: 20 }]); // fast path
    await log(member, at('2033-05-02T09:00:00Z'), [{ exercise_id: a, reps: 5, load_kg: 20 }]); // A later on the 3rd: replay
    expect(await scoresIn(creator, ids, member.id)).toEqual(frozen);
    await unlog(member, first);
    expect(await scoresIn(creator, ids, member.id)).toEqual(frozen);
  });
});

// ---- Random histories against a plain recomputation (independent of the SQL) ----

interface ModelChallenge { id: string; metric: Metric; exerciseId: string | null; startsAt: number; endsAt: number }
interface ModelLog { id: string; member: number; at: number; sets: SetIn[] }

/** DESIGN §7 and scores.ts's header, evaluated over the whole list of logs. */
function modelScore(c: ModelChallenge, logs: ModelLog[], joinedAt: number): { score: number; reachedAt: number } {
  const counting = logs.filter((l) => l.at >= c.startsAt && l.at < c.endsAt);
  if (c.metric === 'streak_days') {
    const days = [...new Set(counting.map((l) => Math.floor(l.at / DAY_MS)))].sort((p, q) => p - q);
    let best = 0;
    let bestEnd = 0;
    for (let i = 0, run = 0; i < days.length; i++) {
      run = i > 0 && days[i] === days[i - 1]! + 1 ? run + 1 : 1;
      if (run > best) [best, bestEnd] = [run, days[i]!];
    }
    return { score: best, reachedAt: best > 0 ? bestEnd * DAY_MS : joinedAt };
  }
  const gain = (l: ModelLog) =>
    c.metric === 'workouts_count'
      ? 1
      : c.metric === 'workouts_with_exercise'
        ? Number(l.sets.some((s) => s.exercise_id === c.exerciseId))
        : l.sets.filter((s) => !s.is_warmup).reduce((sum, s) => sum + s.reps * Math.round((s.load_kg ?? 0) * 100), 0); // cents
  const gaining = counting.filter((l) => gain(l) > 0);
  const total = gaining.reduce((sum, l) => sum + gain(l), 0);
  return { score: c.metric === 'volume_kg' ? total / 100 : total, reachedAt: gaining.length ? Math.max(...gaining.map((l) => l.at)) : joinedAt };
}

const MIN_MS = 60_000;
type Op =
  | { kind: 'log'; member: number; when: { edge: 'start' | 'end'; challenge: number; offsetMs: number } | { within: number; permille: number } | { minutes: number; seconds: number }; sets: SetIn[]; inCommunity: boolean }
  | { kind: 'delete'; pick: number }
  | { kind: 'join' | 'leave'; member: number; challenge: number }
  | { kind: 'cancel'; challenge: number };

describe('random histories', () => {
  it('keeps every participant’s score and rank equal to a plain recomputation from the logs', async () => {
    clock = T;
    const creator = await createCreator(t);
    const place = await placeIn(t, creator);
    const exercises = (await catalogExercises(t, 3)) as [string, string, string];
    // Each run: four challenges (one per metric) starting 3 to 6 days before T0, lasting 1 to 3 days,
    // all scheduled at Tj = T0 − 8 d, when joins, leaves and cancels happen; logs are written at T0,
    // dated at a window's edge, somewhere in or around a window, or anywhere in the week before T0.
    const T0 = T.getTime();
    const Tj = new Date(T0 - 8 * DAY_MS);
    const windowArb = fc.record({ startMinutes: fc.integer({ min: 0, max: 3 * 24 * 60 }), days: fc.integer({ min: 1, max: 3 }) });
    const set = fc.record({
      exercise_id: fc.constantFrom(...exercises),
      reps: fc.integer({ min: 1, max: 12 }),
      load_kg: fc.constantFrom(0, 2.5, 20, 22.5, 61.25),
      is_warmup: fc.boolean(),
    });
    const member = fc.integer({ min: 0, max: 1 });
    const challenge = fc.integer({ min: 0, max: 3 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          kind: fc.constant('log' as const),
          member,
          when: fc.oneof(
            fc.record({ edge: fc.constantFrom('start' as const, 'end' as const), challenge, offsetMs: fc.constantFrom(-1000, 0) }),
            fc.record({ within: challenge, permille: fc.integer({ min: -100, max: 1100 }) }),
            fc.record({ minutes: fc.integer({ min: -7 * 24 * 60, max: 4 }), seconds: fc.integer({ min: 0, max: 59 }) }),
          ),
          sets: fc.array(set, { minLength: 1, maxLength: 3 }),
          inCommunity: fc.boolean(),
        }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('join' as const, 'leave' as const), member, challenge }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), challenge }) },
    );
    const joinedAtStart = fc.array(fc.integer({ min: 0, max: 3 }).map((n) => n > 0), { minLength: 8, maxLength: 8 });

    await fc.assert(
      fc.asyncProperty(fc.array(windowArb, { minLength: 4, maxLength: 4 }), fc.constantFrom(0, 1), joinedAtStart, fc.array(op, { minLength: 8, maxLength: 18 }), async (windows, exercise, initially, ops) => {
        clock = Tj;
        const members = [await subscribedMember(t, creator, place), await subscribedMember(t, creator, place)];
        const challenges: ModelChallenge[] = [];
        for (const [i, metric] of METRICS.entries()) {
          const startsAt = new Date(T0 - 6 * DAY_MS + windows[i]!.startMinutes * MIN_MS);
          const exerciseId = metric === 'workouts_with_exercise' ? exercises[exercise]! : null;
          const created = await createChallenge(t, creator, { community_id: place.communityId, metric, exercise_id: exerciseId, starts_at: startsAt, duration_days: windows[i]!.days });
          challenges.push({ id: created.id, metric, exerciseId, startsAt: startsAt.getTime(), endsAt: startsAt.getTime() + windows[i]!.days * DAY_MS });
        }
        const taking = challenges.map(() => new Set<number>()); // members taking part, per challenge
        const frozen = new Map<number, Map<number, { score: number; reachedAt: number }>>(); // canceled: the scores when canceled
        const logs: ModelLog[] = [];
        const standing = (c: number, m: number) => frozen.get(c)?.get(m) ?? modelScore(challenges[c]!, logs.filter((l) => l.member === m), Tj.getTime());
        for (const [k, on] of initially.entries()) {
          if (!on) continue;
          await joined(t, members[k % 2]!, challenges[k >> 1]!.id);
          taking[k >> 1]!.add(k % 2);
        }

        for (const o of ops) {
          if (o.kind === 'log') {
            clock = T;
            const w = o.when;
            const within = (c: ModelChallenge, permille: number) => Math.min(T0 + 4 * MIN_MS, c.startsAt + Math.round(((c.endsAt - c.startsAt) * permille) / 1e6) * 1000);
            const at =
              'edge' in w
                ? (w.edge === 'start' ? challenges[w.challenge]!.startsAt : challenges[w.challenge]!.endsAt) + w.offsetMs
                : 'within' in w
                  ? within(challenges[w.within]!, w.permille)
                  : T0 + w.minutes * MIN_MS + w.seconds * 1000;
            const id = await log(members[o.member]!, new Date(at), o.sets, o.inCommunity ? place.communityId : undefined);
            logs.push({ id, member: o.member, at, sets: o.sets });
          } else if (o.kind === 'delete') {
            if (!logs.length) continue;
            const [gone] = logs.splice(o.pick % logs.length, 1);
            await unlog(members[gone!.member]!, gone!.id);
          } else {
            clock = Tj;
            const c = challenges[o.challenge]!;
            if (o.kind === 'cancel') {
              expect((await post(creator, `/api/v1/challenges/${c.id}/cancel`)).statusCode).toBe(200);
              if (!frozen.has(o.challenge)) frozen.set(o.challenge, new Map([...taking[o.challenge]!].map((m) => [m, standing(o.challenge, m)])));
              continue;
            }
            const who = members[o.member]!;
            const res = o.kind === 'join' ? await joinChallenge(t, who, c.id) : await post(who, `/api/v1/member/challenges/${c.id}/leave`);
            expect(res.statusCode, res.body).toBe(frozen.has(o.challenge) ? 409 : 200);
            if (!frozen.has(o.challenge)) taking[o.challenge]![o.kind === 'join' ? 'add' : 'delete'](o.member);
          }
        }

        for (const [i, c] of challenges.entries()) {
          const expected = [...taking[i]!]
            .map((m) => ({ id: members[m]!.id, ...standing(i, m) }))
            .sort((p, q) => q.score - p.score || p.reachedAt - q.reachedAt || (p.id < q.id ? -1 : 1));
          const what = `${c.metric} ${new Date(c.startsAt).toISOString()} +${(c.endsAt - c.startsAt) / DAY_MS}d`;
          expect(await boardOf(creator, c.id), what).toEqual(expected.map((r) => [r.id, r.score]));
          // When each reached it, straight from the table: the rank of any future tie.
          const stored = await t.database.db.selectFrom('challenge_participants').select(['member_id', 'reached_at']).where('challenge_id', '=', c.id).execute();
          expect(new Map(stored.map((r) => [r.member_id, new Date(r.reached_at).toISOString()])), what).toEqual(new Map(expected.map((r) => [r.id, new Date(r.reachedAt).toISOString()])));
        }
      }),
      { numRuns: 20, interruptAfterTimeLimit: 150_000, markInterruptAsFailure: true },
    );
  }, 180_000);
});
