import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BENCH_PRESS_ID, buildTestApp, json, mintMember, type TestApp, type TestMember } from '../../../test/helpers.js';
import { newId } from '../../db/ids.js';
import { createLoggingRepo } from './logging.repo.js';
import type { NewLog } from './workout-logs.repo.js';
import { displayValue, recompute, type WorkingSet } from './prs.js';

/**
 * The newest-log path detects PRs in SQL (log-batch.ts); deletions and back-dated logs
 * replay history in TypeScript (prs.ts). These tests hold the two to the same rules.
 */
let t: TestApp;
let squat = '';
beforeAll(async () => {
  t = await buildTestApp();
  squat = (await t.database.db.selectFrom('exercises').select('id').where('slug', '=', 'barbell-back-squat').executeTakeFirstOrThrow()).id;
});
afterAll(() => t.close());

type SetIn = { exercise_id: string; reps: number; load_kg: number; is_warmup: boolean };
interface Logged {
  id: string;
  performedAt: Date;
  sets: SetIn[];
  prs: Array<{ exercise_id: string; kind: string; value: number; previous_value: number; set_index: number }>;
}

const post = (member: TestMember, performedAt: Date, sets: SetIn[]) =>
  t.app.inject({ method: 'POST', url: '/api/v1/member/workout-logs', headers: member.headers, payload: { performed_at: performedAt.toISOString(), sets } });

/** What prs.ts says the history makes: PRs per log and the final holders, per exercise. */
function expected(history: Logged[]) {
  const ordered = [...history].sort((a, b) => a.performedAt.getTime() - b.performedAt.getTime() || a.id.localeCompare(b.id));
  const prs = new Map<string, Array<{ exercise_id: string; kind: string; value: number; previous_value: number; set_index: number }>>();
  const holders: Array<{ exercise_id: string; kind: string; value: number; previous_value: number | null; log_id: string; set_position: number }> = [];
  for (const exerciseId of [BENCH_PRESS_ID, squat]) {
    const logs = ordered
      .map((l) => ({
        log: { logId: l.id, performedAt: l.performedAt, creatorId: null },
        sets: l.sets.flatMap((s, position): WorkingSet[] => (s.exercise_id === exerciseId ? [{ position, reps: s.reps, loadKg: s.load_kg, isWarmup: s.is_warmup }] : [])),
      }))
      .filter((l) => l.sets.length > 0);
    const result = recompute(logs);
    for (const [logId, found] of result.prsByLog) {
      prs.set(logId, [
        ...(prs.get(logId) ?? []),
        ...found.map((p) => ({ exercise_id: exerciseId, kind: p.kind, value: displayValue(p.value), previous_value: displayValue(p.previousValue), set_index: p.position })),
      ]);
    }
    for (const [kind, h] of Object.entries(result.bests)) {
      holders.push({ exercise_id: exerciseId, kind, value: h.value, previous_value: h.previousValue, log_id: h.logId, set_position: h.position });
    }
  }
  return { prs, holders };
}

async function holdersOf(member: TestMember) {
  const rows = await t.database.db
    .selectFrom('personal_records')
    .select(['exercise_id', 'kind', 'value', 'previous_value', 'log_id', 'set_position'])
    .where('member_id', '=', member.id)
    .execute();
  return rows.map((r) => ({ ...r, value: Number(r.value), previous_value: r.previous_value === null ? null : Number(r.previous_value) }));
}

const newLog = (member: TestMember, performedAt: Date, sets: SetIn[]): NewLog => ({
  id: newId(),
  member_id: member.id,
  creator_id: null,
  community_id: null,
  workout_id: null,
  performed_at: performedAt,
  created_at: new Date(),
  sets: sets.map((s, position) => ({ position, exerciseId: s.exercise_id, reps: s.reps, loadKg: s.load_kg, isWarmup: s.is_warmup, rpe: null })),
});

const byKey = <T extends { exercise_id: string; kind: string }>(rows: T[]) =>
  [...rows].sort((a, b) => a.exercise_id.localeCompare(b.exercise_id) || a.kind.localeCompare(b.kind));

describe('the single-statement logging path', () => {
  it('finds exactly the PRs and leaves exactly the holders that the TypeScript rules do, on random histories', async () => {
    const exercises = [BENCH_PRESS_ID, squat];
    const set = fc.record({
      exercise_id: fc.constantFrom(...exercises),
      reps: fc.integer({ min: 1, max: 12 }),
      // Few distinct loads, so ties (which never make a PR) are common; 0 is bodyweight.
      load_kg: fc.constantFrom(0, 20, 22.5, 40, 60, 60.25, 100),
      is_warmup: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(set, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 7 }), async (logs) => {
        const member = await mintMember(t);
        const history: Logged[] = [];
        let minute = 0;
        for (const sets of logs) {
          const performedAt = new Date(Date.UTC(2026, 0, 1) + ++minute * 60_000);
          const res = await post(member, performedAt, sets);
          expect(res.statusCode, res.body).toBe(201);
          const data = json(res).data;
          history.push({ id: data.id, performedAt, sets, prs: data.prs });
        }
        const want = expected(history);
        for (const log of history) expect(byKey(log.prs)).toEqual(byKey(want.prs.get(log.id) ?? []));
        expect(byKey(await holdersOf(member))).toEqual(byKey(want.holders));
      }),
      { numRuns: 25 },
    );
  });

  it('gives each member of a shared statement exactly the PRs and holders the TypeScript rules do, on random histories', async () => {
    const set = fc.record({
      exercise_id: fc.constantFrom(BENCH_PRESS_ID, squat),
      reps: fc.integer({ min: 1, max: 12 }),
      load_kg: fc.constantFrom(0, 20, 40, 60, 100),
      is_warmup: fc.boolean(),
    });
    const history = fc.array(fc.array(set, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 });
    const repo = createLoggingRepo(t.database.db);
    await fc.assert(
      fc.asyncProperty(fc.array(history, { minLength: 2, maxLength: 4 }), async (histories) => {
        const members = await Promise.all(histories.map(() => mintMember(t)));
        const logged: Logged[][] = histories.map(() => []);
        // Step k sends every member's k-th log in one statement (members run out at different steps).
        for (let k = 0; k < Math.max(...histories.map((h) => h.length)); k++) {
          const performedAt = new Date(Date.UTC(2026, 3, 1) + k * 60_000);
          const batch = histories.flatMap((h, m) => { const sets = h[k]; return sets ? [{ m, sets }] : []; });
          const logs = batch.map(({ m, sets }) => newLog(members[m]!, performedAt, sets));
          const results = await repo.logBatch(logs.map((log) => ({ log, valid: true })));
          results.forEach((r, i) => {
            expect(r.outcome).toBe('written');
            const { m, sets } = batch[i]!;
            logged[m]!.push({ id: logs[i]!.id, performedAt, sets, prs: r.prs.map((p) => ({ exercise_id: p.exerciseId, kind: p.kind, value: displayValue(p.value), previous_value: displayValue(p.previousValue), set_index: p.position })) });
          });
        }
        for (const [m, member] of members.entries()) {
          const want = expected(logged[m]!);
          for (const log of logged[m]!) expect(byKey(log.prs)).toEqual(byKey(want.prs.get(log.id) ?? []));
          expect(byKey(await holdersOf(member))).toEqual(byKey(want.holders));
        }
      }),
      { numRuns: 10 },
    );
  });

  it('writes the valid logs of a shared statement and, for each other log, nothing but its own reason', async () => {
    const [a, b, c] = await Promise.all([mintMember(t), mintMember(t), mintMember(t)]);
    const repo = createLoggingRepo(t.database.db);
    const at = (day: number) => new Date(Date.UTC(2026, 4, day));
    const sets = [{ exercise_id: BENCH_PRESS_ID, reps: 5, load_kg: 60, is_warmup: false }];
    expect((await post(c!, at(10), sets)).statusCode).toBe(201);
    const results = await repo.logBatch([
      { log: newLog(a!, at(11), sets), valid: true },
      { log: newLog(b!, at(11), sets), valid: false }, // failed a check made before the database
      { log: newLog(c!, at(9), sets), valid: true }, // dated before c's log of the same exercise
    ]);
    expect(results.map((r) => r.outcome)).toEqual(['written', 'refused', 'later']);
    expect(results.map((r) => r.visible.get(BENCH_PRESS_ID))).toEqual(['Barbell Bench Press', 'Barbell Bench Press', 'Barbell Bench Press']);
    const logs = await t.database.db.selectFrom('workout_logs').select('member_id').where('member_id', 'in', [a!.id, b!.id, c!.id]).execute();
    expect(logs.map((l) => l.member_id).sort()).toEqual([a!.id, c!.id].sort());
    expect(await t.database.db.selectFrom('workout_sets').select('log_id').where('member_id', '=', b!.id).execute()).toEqual([]);
  });

  it("keeps one member's records right when their logs arrive at once, in any order of dates", async () => {
    const member = await mintMember(t);
    const base = Date.UTC(2026, 1, 1);
    // Dates shuffled against arrival, so some logs land before later-dated ones and some after.
    const minutes = [5, 1, 7, 3, 8, 2, 6, 4];
    const logs = minutes.map((m, i) => ({
      performedAt: new Date(base + m * 60_000),
      sets: [
        { exercise_id: BENCH_PRESS_ID, reps: 1 + ((i * 5) % 12), load_kg: 40 + ((i * 7) % 5) * 10, is_warmup: false },
        { exercise_id: squat, reps: 3 + (i % 4), load_kg: 60 + m * 2.5, is_warmup: i % 3 === 0 },
      ],
    }));
    const responses = await Promise.all(logs.map((l) => post(member, l.performedAt, l.sets)));
    for (const res of responses) expect(res.statusCode, res.body).toBe(201);
    const history = responses.map((res, i) => ({ id: json(res).data.id as string, performedAt: logs[i]!.performedAt, sets: logs[i]!.sets, prs: [] }));
    expect(byKey(await holdersOf(member))).toEqual(byKey(expected(history).holders));
    const version = await t.database.db.selectFrom('member_training').select('version').where('member_id', '=', member.id).executeTakeFirstOrThrow();
    expect(Number(version.version)).toBe(logs.length);
  });

  // PGlite has one connection: a held lock would stall the request behind it for good.
  it.runIf(inject('postgresUrl'))('runs again when another change of the member\'s history commits while it waits, and logs once', async () => {
    const member = await mintMember(t);
    expect((await post(member, new Date(Date.UTC(2026, 2, 1)), [{ exercise_id: BENCH_PRESS_ID, reps: 5, load_kg: 50, is_warmup: false }])).statusCode).toBe(201);
    let answer: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    // Hold the member's history lock (as a deletion does), send a log meanwhile, then commit:
    // the log's statement finds the version moved, writes nothing, and runs again.
    await t.database.db.transaction().execute(async (trx) => {
      await createLoggingRepo(t.database.db).lockHistory(member.id, trx);
      answer = post(member, new Date(Date.UTC(2026, 2, 2)), [{ exercise_id: BENCH_PRESS_ID, reps: 5, load_kg: 60, is_warmup: false }]);
      await new Promise((r) => setTimeout(r, 300));
    });
    const res = await answer!;
    expect(res.statusCode, res.body).toBe(201);
    expect(json(res).data.prs.map((p: { kind: string }) => p.kind).sort()).toEqual(['est_1rm', 'max_load', 'max_volume']);
    const logs = await t.database.db.selectFrom('workout_logs').select('id').where('member_id', '=', member.id).execute();
    expect(logs).toHaveLength(2);
    const version = await t.database.db.selectFrom('member_training').select('version').where('member_id', '=', member.id).executeTakeFirstOrThrow();
    expect(Number(version.version)).toBe(3);
  });
});
