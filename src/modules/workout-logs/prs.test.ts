import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyLog, PR_KINDS, recompute, setValues, type Bests, type LogRef, type PrKind, type WorkingSet } from './prs.js';

let n = 0;
const log = (): LogRef => ({ logId: `log-${++n}`, performedAt: new Date(1_700_000_000_000 + n * 1000), creatorId: null });
const sets = (...s: Array<[number, number] | [number, number, 'warmup']>): WorkingSet[] =>
  s.map(([loadKg, reps, w], position) => ({ position, loadKg, reps, isWarmup: w === 'warmup' }));
const kinds = (prs: { kind: PrKind }[]) => prs.map((p) => p.kind).sort();

describe('PR values', () => {
  it('computes Epley with 1 rep as the load itself, volume as load × reps', () => {
    expect(setValues({ loadKg: 100, reps: 1 })).toEqual({ max_load: 100, est_1rm: 100, max_volume: 100, max_reps: 1 });
    expect(setValues({ loadKg: 90, reps: 10 })).toEqual({ max_load: 90, est_1rm: 120, max_volume: 900, max_reps: 10 });
    expect(setValues({ loadKg: 100, reps: 6 }).est_1rm).toBe(setValues({ loadKg: 90, reps: 10 }).est_1rm);
  });

  it('judges a bodyweight set (load 0) on max_reps alone', () => {
    expect(setValues({ loadKg: 0, reps: 15 })).toEqual({ max_reps: 15 });
  });
});

describe('PR detection', () => {
  it('treats the first set ever as the baseline, not a PR', () => {
    const first = applyLog({}, sets([60, 5]), log());
    expect(first.prs).toEqual([]);
    expect(first.bests.max_load).toMatchObject({ value: 60, previousValue: null });
  });

  it('reports a PR only when strictly better; a tie is not a PR and the earlier set keeps it', () => {
    const a = log();
    const { bests } = applyLog({}, sets([60, 5]), a);
    const tie = applyLog(bests, sets([60, 5]), log());
    expect(tie.prs).toEqual([]);
    expect(tie.bests.max_load?.logId).toBe(a.logId);
    const better = applyLog(bests, sets([62.5, 5]), log());
    expect(better.prs).toContainEqual({ kind: 'max_load', value: 62.5, previousValue: 60, position: 0 });
    expect(kinds(better.prs)).toEqual(['est_1rm', 'max_load', 'max_volume']);
  });

  it('never lets a warm-up make or hold a record', () => {
    const { bests } = applyLog({}, sets([100, 10, 'warmup'], [50, 5]), log());
    expect(bests.max_load?.value).toBe(50);
    expect(applyLog(bests, sets([120, 12, 'warmup']), log()).prs).toEqual([]);
  });

  it('reports each kind once per log, for its best set, against the record before the log', () => {
    const { bests } = applyLog({}, sets([100, 5]), log());
    const { prs } = applyLog(bests, sets([105, 5], [110, 2], [80, 12]), log());
    expect(prs).toEqual(
      expect.arrayContaining([
        { kind: 'max_load', value: 110, previousValue: 100, position: 1 },
        { kind: 'max_volume', value: 960, previousValue: 500, position: 2 },
        { kind: 'est_1rm', value: 122.5, previousValue: setValues({ loadKg: 100, reps: 5 }).est_1rm!, position: 0 },
        { kind: 'max_reps', value: 12, previousValue: 5, position: 2 },
      ]),
    );
    expect(prs).toHaveLength(4);
  });

  it('counts a later set of the very first log that beats its first set as a PR', () => {
    const { prs } = applyLog({}, sets([60, 5], [70, 5], [65, 5]), log());
    expect(prs).toContainEqual({ kind: 'max_load', value: 70, previousValue: 60, position: 1 });
  });

  it('keeps bodyweight and weighted sets apart: a weighted set after bodyweight ones is the load baseline', () => {
    const { bests } = applyLog({}, sets([0, 10]), log());
    const weighted = applyLog(bests, sets([10, 8]), log());
    expect(weighted.prs).toEqual([]);
    const moreReps = applyLog(weighted.bests, sets([0, 11]), log());
    expect(moreReps.prs).toEqual([{ kind: 'max_reps', value: 11, previousValue: 10, position: 0 }]);
  });
});

/** The rules as written, evaluated naively over the whole history (no state). */
function reference(history: Array<{ log: LogRef; sets: WorkingSet[] }>) {
  const prsByLog = new Map<string, Array<{ kind: PrKind; value: number; previousValue: number }>>();
  const earlier: Record<PrKind, number[]> = { max_load: [], est_1rm: [], max_volume: [], max_reps: [] };
  for (const { log: l, sets: s } of history) {
    for (const kind of PR_KINDS) {
      const values = s.filter((x) => !x.isWarmup).flatMap((x) => (setValues(x)[kind] === undefined ? [] : [setValues(x)[kind]!]));
      if (!values.length) continue;
      const max = Math.max(...values);
      const prior = earlier[kind];
      let previous: number | undefined;
      if (prior.length) previous = max > Math.max(...prior) ? Math.max(...prior) : undefined;
      else {
        const firstMax = values.indexOf(max);
        previous = firstMax > 0 ? Math.max(...values.slice(0, firstMax)) : undefined;
      }
      if (previous !== undefined) prsByLog.set(l.logId, [...(prsByLog.get(l.logId) ?? []), { kind, value: max, previousValue: previous }]);
      prior.push(...values);
    }
  }
  return prsByLog;
}

const setArb = fc.record({
  loadKg: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 }).map((x) => x * 2.5)),
  reps: fc.integer({ min: 1, max: 15 }),
  isWarmup: fc.boolean(),
});
const historyArb = fc.array(fc.array(setArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 12 }).map((logs) =>
  logs.map((s) => ({ log: log(), sets: s.map((x, position) => ({ ...x, position })) })),
);

describe('PR detection (properties)', () => {
  it('reports exactly the PRs the naive reading of the rules gives', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const { prsByLog } = recompute(history);
        const expected = reference(history);
        for (const { log: l } of history) {
          const got = (prsByLog.get(l.logId) ?? []).map(({ kind, value, previousValue }) => ({ kind, value, previousValue }));
          expect(got.sort((a, b) => a.kind.localeCompare(b.kind))).toEqual((expected.get(l.logId) ?? []).sort((a, b) => a.kind.localeCompare(b.kind)));
        }
      }),
    );
  });

  it('holds, per kind, the first working set reaching the all-time best', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const { bests } = recompute(history);
        for (const kind of PR_KINDS) {
          const all = history.flatMap(({ log: l, sets: s }) =>
            s.filter((x) => !x.isWarmup && setValues(x)[kind] !== undefined).map((x) => ({ logId: l.logId, position: x.position, value: setValues(x)[kind]! })),
          );
          if (!all.length) expect(bests[kind]).toBeUndefined();
          else {
            const max = Math.max(...all.map((a) => a.value));
            const first = all.find((a) => a.value === max)!;
            expect(bests[kind]).toMatchObject({ value: max, logId: first.logId, position: first.position });
          }
        }
      }),
    );
  });

  it('recomputing without a log equals never having logged it (deletion)', () => {
    fc.assert(
      fc.property(historyArb, fc.nat(), (history, pick) => {
        const without = history.filter((_, i) => i !== pick % history.length);
        const strip = (b: Bests) => Object.fromEntries(Object.entries(b).map(([k, h]) => [k, { value: h.value, logId: h.logId, position: h.position }]));
        expect(strip(recompute(without).bests)).toEqual(strip(without.reduce<Bests>((acc, h) => applyLog(acc, h.sets, h.log).bests, {})));
      }),
    );
  });
});
