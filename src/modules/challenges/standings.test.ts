import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, json, openTestDatabase, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { createChallenge, joined, leaderboard, subscribedMember } from '../../../test/challenges-kit.js';
import { catalogExercises, placeIn } from '../../../test/members-kit.js';
import { createStandings } from './standings.js';

/**
 * The daily job behind `delta` (standings.ts), driven by the service clock. Each test keeps
 * to its own month of 2034, so the job (which ranks every challenge due) only finds its own.
 */
const at = (iso: string) => new Date(iso);
let clock = at('2034-01-01T10:00:00Z');
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
  await t.app.tasks.idle(); // a start-up run of the job, were ranking on in tests
});
afterAll(async () => t.close());

let exercise: string;
/** Logs one set through the member API (201 expected); `performed_at` may be up to 5 minutes past the clock. */
async function logAt(member: TestMember, performedAt: string) {
  exercise ??= (await catalogExercises(t, 1))[0]!;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/member/workout-logs',
    headers: member.headers,
    payload: { performed_at: performedAt, sets: [{ exercise_id: exercise, reps: 5, load_kg: 20 }] },
  });
  expect(res.statusCode, res.body).toBe(201);
}

/** The creator's board as [member, score, delta] in rank order. */
const board = async (creator: TestCreator, id: string) => (await leaderboard(t, creator, id)).data.rankings.map((r) => [r.member_id, r.score, r.delta]);

/** The stored end-of-day ranks of a challenge, as [member, day, rank] in rank order. */
async function dayRanks(challengeId: string) {
  const { rows } = await sql<{ member_id: string; day: string; rank: number }>`
    select member_id, day::text as day, rank from challenge_day_ranks where challenge_id = ${challengeId} order by rank`.execute(t.database.db);
  return rows.map((r) => [r.member_id, r.day, r.rank]);
}

async function rankedDay(challengeId: string) {
  const { rows } = await sql<{ day: string | null }>`select ranked_day::text as day from challenges where id = ${challengeId}`.execute(t.database.db);
  return rows[0]!.day;
}

async function setting(names: string[]) {
  const creator = await createCreator(t);
  const place = await placeIn(t, creator);
  const members: TestMember[] = [];
  for (const name of names) members.push(await subscribedMember(t, creator, place, { name }));
  return { creator, place, members };
}

describe('deltas', () => {
  it('moves an overtaking member +1 and the overtaken −1 after midnight, and shows +0 unchanged and for who joined today', async () => {
    clock = at('2034-04-10T10:00:00Z');
    const { creator, place, members } = await setting(['Carla Dias', 'Ana Souza', 'Bruno Lima']);
    const [c, a, b] = members as [TestMember, TestMember, TestMember];
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, starts_at: at('2034-04-08T00:00:00Z'), duration_days: 10 });
    for (const m of [c, a, b]) await joined(t, m, challenge.id);
    for (let i = 0; i < 5; i++) await logAt(c, `2034-04-10T09:0${i}:00Z`);
    for (let i = 0; i < 2; i++) await logAt(a, `2034-04-09T12:0${i}:00Z`);
    await logAt(b, '2034-04-10T08:00:00Z');
    expect(await board(creator, challenge.id)).toEqual([[c.id, 5, '+0'], [a.id, 2, '+0'], [b.id, 1, '+0']]); // never ranked yet

    clock = at('2034-04-11T00:05:00Z');
    expect(await t.app.standings.run()).toEqual({ day: '2034-04-10', ranked: 1 });
    expect(await dayRanks(challenge.id)).toEqual([[c.id, '2034-04-10', 1], [a.id, '2034-04-10', 2], [b.id, '2034-04-10', 3]]);
    expect(await board(creator, challenge.id)).toEqual([[c.id, 5, '+0'], [a.id, 2, '+0'], [b.id, 1, '+0']]);

    clock = at('2034-04-11T08:00:00Z');
    await logAt(b, '2034-04-11T07:00:00Z');
    await logAt(b, '2034-04-11T07:30:00Z');
    const d = await subscribedMember(t, creator, place, { name: 'Davi Rocha' });
    await joined(t, d, challenge.id);
    await logAt(d, '2034-04-11T07:45:00Z');

    expect(await board(creator, challenge.id)).toEqual([[c.id, 5, '+0'], [b.id, 3, '+1'], [a.id, 2, '-1'], [d.id, 1, '+0']]);
    for (const [m, rank, delta] of [[b, 2, '+1'], [a, 3, '-1'], [d, 4, '+0']] as const) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/member/challenges/${challenge.id}/leaderboard`, headers: m.headers });
      expect(json(res).data.me, m.id).toMatchObject({ member_id: m.id, rank, delta });
    }
  });
});

describe('the daily job', () => {
  it('ranks each challenge once a day, however many times and on however many nodes it runs', async () => {
    clock = at('2034-05-10T10:00:00Z');
    const { creator, place, members } = await setting(['Ana Souza', 'Bruno Lima']);
    const [a, b] = members as [TestMember, TestMember];
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await createChallenge(t, creator, { community_id: place.communityId, starts_at: at('2034-05-09T00:00:00Z'), duration_days: 5 })).id);
    for (const id of ids) for (const m of [a, b]) await joined(t, m, id);
    await logAt(a, '2034-05-10T09:00:00Z');

    clock = at('2034-05-11T00:01:00Z');
    expect(await t.app.standings.run()).toEqual({ day: '2034-05-10', ranked: 2 });
    const first = await Promise.all(ids.map(dayRanks));
    expect(first[0]).toEqual([[a.id, '2034-05-10', 1], [b.id, '2034-05-10', 2]]);
    clock = at('2034-05-11T09:00:00Z');
    expect(await t.app.standings.run()).toEqual({ day: '2034-05-10', ranked: 0 });
    expect(await Promise.all(ids.map(dayRanks))).toEqual(first);

    // b overtakes; then the job runs at once on this node twice and on a second node (its own pool on PostgreSQL).
    await logAt(b, '2034-05-11T08:00:00Z');
    await logAt(b, '2034-05-11T08:30:00Z');
    clock = at('2034-05-12T00:01:00Z');
    const second = t.database.kind === 'postgres' ? await openTestDatabase() : t.database;
    try {
      const node2 = createStandings({ db: second.db, now: () => clock });
      const runs = await Promise.all([t.app.standings.run(), t.app.standings.run(), node2.run()]);
      expect(runs.map((r) => r.day)).toEqual(['2034-05-11', '2034-05-11', '2034-05-11']);
      expect(runs.reduce((n, r) => n + r.ranked, 0)).toBe(2);
    } finally {
      if (second !== t.database) await second.close();
    }
    for (const id of ids) {
      expect(await rankedDay(id)).toBe('2034-05-11');
      expect(await dayRanks(id)).toEqual([[b.id, '2034-05-11', 1], [a.id, '2034-05-11', 2]]);
      expect(await board(creator, id)).toEqual([[b.id, 2, '+0'], [a.id, 1, '+0']]);
    }
  });

  it('run late after a missed midnight, ranks the scores as they were at midnight, from when logs were written', async () => {
    clock = at('2034-06-10T10:00:00Z');
    const { creator, place, members } = await setting(['Ana Souza', 'Bruno Lima']);
    const [a, b] = members as [TestMember, TestMember];
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, starts_at: at('2034-06-08T00:00:00Z'), duration_days: 10 });
    for (const m of [a, b]) await joined(t, m, challenge.id);
    for (const h of ['06', '07', '08']) await logAt(a, `2034-06-10T${h}:00:00Z`);
    await logAt(b, '2034-06-10T09:00:00Z');

    // No run at midnight. In the morning b logs three workouts dated the day before (one before
    // its 09:00 set of the same exercise: the replay path), and c joins and logs.
    clock = at('2034-06-11T09:00:00Z');
    for (const h of ['08', '20', '21']) await logAt(b, `2034-06-10T${h}:00:00Z`);
    const c = await subscribedMember(t, creator, place, { name: 'Carla Dias' });
    await joined(t, c, challenge.id);
    await logAt(c, '2034-06-11T08:30:00Z');
    await logAt(c, '2034-06-11T08:45:00Z');

    clock = at('2034-06-11T10:00:00Z');
    expect(await t.app.standings.run()).toEqual({ day: '2034-06-10', ranked: 1 });
    // At midnight a had 3 and b 1 (b's logs dated the 10th were written on the 11th); c had not joined.
    expect(await dayRanks(challenge.id)).toEqual([[a.id, '2034-06-10', 1], [b.id, '2034-06-10', 2]]);
    expect(await board(creator, challenge.id)).toEqual([[b.id, 4, '+1'], [a.id, 3, '-1'], [c.id, 2, '+0']]);
  });

  it('ranks only the challenges that ran during the day and are not canceled', async () => {
    clock = at('2034-07-10T10:00:00Z');
    const { creator, place, members } = await setting(['Ana Souza', 'Bruno Lima']);
    const make = (startsAt: string, days: number) => createChallenge(t, creator, { community_id: place.communityId, starts_at: at(startsAt), duration_days: days });
    const running = await make('2034-07-08T00:00:00Z', 10);
    const canceled = await make('2034-07-08T00:00:00Z', 10);
    const endedThatDay = await make('2034-07-08T12:00:00Z', 2); // ends 2034-07-10T12:00
    const endedBefore = await make('2034-07-05T00:00:00Z', 3); // ends 2034-07-08T00:00
    const startsNextDay = await make('2034-07-11T00:00:00Z', 10);
    for (const c of [running, canceled, endedThatDay, startsNextDay]) for (const m of members) await joined(t, m, c.id);
    await logAt(members[1]!, '2034-07-10T09:00:00Z');
    const cancel = await t.app.inject({ method: 'POST', url: `/api/v1/challenges/${canceled.id}/cancel`, headers: creator.headers });
    expect(cancel.statusCode).toBe(200);

    clock = at('2034-07-11T00:01:00Z');
    expect(await t.app.standings.run()).toEqual({ day: '2034-07-10', ranked: 2 });
    for (const c of [running, endedThatDay]) {
      expect(await rankedDay(c.id)).toBe('2034-07-10');
      expect((await dayRanks(c.id)).map((r) => r[0])).toEqual([members[1]!.id, members[0]!.id]);
    }
    for (const c of [canceled, endedBefore, startsNextDay]) {
      expect(await rankedDay(c.id)).toBeNull();
      expect(await dayRanks(c.id)).toEqual([]);
    }
    expect((await board(creator, canceled.id)).map((r) => r[2])).toEqual(['+0', '+0']);
  });
});

describe('a member rank read from either end of the board', () => {
  it('equals the board position for every member, whichever half yesterday put them in', async () => {
    clock = at('2034-09-10T10:00:00Z');
    const names = ['Ana A', 'Bia B', 'Caio C', 'Davi D', 'Eva E', 'Fabio F', 'Gil G'];
    const { creator, place, members } = await setting(names);
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, starts_at: at('2034-09-08T00:00:00Z'), duration_days: 10 });
    for (const [i, m] of members.entries()) {
      await joined(t, m, challenge.id);
      for (let k = 0; k < i % 4; k++) await logAt(m, `2034-09-10T0${k}:0${i}:00Z`);
    }
    clock = at('2034-09-11T00:05:00Z');
    await t.app.standings.run();
    // Today the bottom of yesterday climbs: the nearer end guessed from yesterday is now the wrong one for some.
    clock = at('2034-09-11T09:00:00Z');
    for (const [i, m] of members.entries()) for (let k = 0; k < 6 - i; k++) await logAt(m, `2034-09-11T0${k}:${10 + i}:00Z`);
    await joined(t, await subscribedMember(t, creator, place, { name: 'Hugo H' }), challenge.id);

    const positions = (await leaderboard(t, creator, challenge.id)).data.rankings.map((r) => [r.member_id, r.rank]);
    expect(positions).toHaveLength(8);
    for (const m of members) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/member/challenges/${challenge.id}/leaderboard?limit=1`, headers: m.headers });
      expect(res.statusCode, res.body).toBe(200);
      const me = json(res).data.me as { member_id: string; rank: number };
      expect([me.member_id, me.rank]).toEqual(positions.find(([id]) => id === m.id));
    }
  });
});

describe('a member rank read from score bands (migrations/0037)', () => {
  /** The kept participants per band equal a count of the board, band by band (slots summed, empty bands dropped). */
  async function bandsAgree(challengeId: string) {
    const { rows } = await sql<{ kept: string | null; counted: string | null }>`
      select (select json_object_agg(band, n order by band)::text from (select band, sum(participants) as n from challenge_score_bands
                where challenge_id = ${challengeId} group by band having sum(participants) <> 0) k) as kept,
             (select json_object_agg(band, n order by band)::text from (select score_band(score) as band, count(*) as n from challenge_participants
                where challenge_id = ${challengeId} group by 1) c) as counted`.execute(t.database.db);
    expect(rows[0]!.kept).toBe(rows[0]!.counted);
  }

  async function everyRankIsItsPosition(creator: TestCreator, challengeId: string, members: TestMember[]) {
    const positions = (await leaderboard(t, creator, challengeId, '?limit=100')).data.rankings.map((r) => [r.member_id, r.rank]);
    for (const m of members) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/member/challenges/${challengeId}/leaderboard?limit=1`, headers: m.headers });
      expect(res.statusCode, res.body).toBe(200);
      const me = json(res).data.me as { member_id: string; rank: number } | null;
      const expected = positions.find(([id]) => id === m.id);
      expect(me && [me.member_id, me.rank], m.id).toEqual(expected ?? null);
    }
    return positions;
  }

  it('equals the board position for every member when scores span whole-number and three-digit bands, ties, a deleted log and a leave', async () => {
    clock = at('2034-10-10T10:00:00Z');
    const { creator, place, members } = await setting(['Ana', 'Bia', 'Caio', 'Davi', 'Eva', 'Fabio', 'Gil', 'Hugo', 'Iara']);
    const challenge = await createChallenge(t, creator, { community_id: place.communityId, metric: 'volume_kg', starts_at: at('2034-10-08T00:00:00Z'), duration_days: 10 });
    for (const m of members) await joined(t, m, challenge.id);
    exercise ??= (await catalogExercises(t, 1))[0]!;
    const logs = new Map<string, string>();
    const log = async (m: TestMember, reps: number, load: number, minute: number) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/member/workout-logs',
        headers: m.headers,
        payload: { performed_at: `2034-10-10T08:${String(minute).padStart(2, '0')}:00Z`, sets: [{ exercise_id: exercise, reps, load_kg: load }] },
      });
      expect(res.statusCode, res.body).toBe(201);
      logs.set(m.id, (json(res).data as { id: string }).id);
    };
    // Volumes: 100; 999 and 1,000 either side of the first three-digit band; 1,234.5 twice (a tie
    // inside band 1,230, the earlier first) and 1,236 in the same band; 1,240; 15,000. Gil and Iara stay at 0.
    await log(members[0]!, 5, 20, 1);
    await log(members[1]!, 1, 999, 2);
    await log(members[2]!, 1, 1000, 3);
    await log(members[3]!, 10, 123.45, 5);
    await log(members[4]!, 10, 123.45, 4);
    await log(members[5]!, 10, 123.6, 6);
    await log(members[7]!, 10, 124, 7);
    await log(members[8]!, 100, 150, 8);
    // A second set of logs moves some across bands: Ana from 100 to 1,100, Davi from 1,234.5 to 1,334.5.
    await log(members[0]!, 1, 1000, 9);
    await log(members[3]!, 1, 100, 10);
    await bandsAgree(challenge.id);
    expect(await everyRankIsItsPosition(creator, challenge.id, members)).toHaveLength(9);

    // Yesterday's ranks make the guessed end wrong for some after Gil climbs past everyone.
    clock = at('2034-10-11T00:05:00Z');
    await t.app.standings.run();
    clock = at('2034-10-11T09:00:00Z');
    await log(members[6]!, 100, 200, 11);
    await everyRankIsItsPosition(creator, challenge.id, members);

    // Iara's 15,000 log deleted (rescored to 0), then Caio leaves.
    const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/member/workout-logs/${logs.get(members[8]!.id)}`, headers: members[8]!.headers });
    expect(deleted.statusCode, deleted.body).toBe(200);
    const left = await t.app.inject({ method: 'POST', url: `/api/v1/member/challenges/${challenge.id}/leave`, headers: members[2]!.headers });
    expect(left.statusCode, left.body).toBeLessThan(300);
    await bandsAgree(challenge.id);
    expect(await everyRankIsItsPosition(creator, challenge.id, members)).toHaveLength(8);
  });
});

