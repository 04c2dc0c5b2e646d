/**
 * Personal-record rules (DESIGN §7), pure: no database, no clock. The service keeps one
 * holder per member × exercise × kind and feeds each new log through `applyLog`; recomputing
 * after a deletion (or a back-dated log) folds the same function over the whole history, so
 * the incremental and the recomputed state can never disagree.
 *
 * - `max_load` (heaviest load), `est_1rm` (Epley: load × (1 + reps/30); 1 rep → the load),
 *   `max_volume` (load × reps), `max_reps` (most reps at any load).
 * - A set with load 0 (bodyweight) is judged on `max_reps` alone; it neither makes nor holds
 *   the load-based kinds. Warm-ups never make or hold any record.
 * - A set is a PR when it strictly beats every earlier working set in that kind; ties are not.
 *   Within one log a kind is reported once, for its best set (its first set reaching the best).
 * - The first working set ever in a kind is the baseline, not a PR. If the log opening the
 *   history beats its own first set later on, that later set is a PR.
 * - `previous_value` is the record as it stood before the log; for a log opening the history,
 *   the best of that log's sets before the PR set.
 */
export const PR_KINDS = ['max_load', 'est_1rm', 'max_volume', 'max_reps'] as const;
export type PrKind = (typeof PR_KINDS)[number];

export interface WorkingSet {
  position: number;
  reps: number;
  loadKg: number;
  isWarmup: boolean;
}

export interface LogRef {
  logId: string;
  performedAt: Date;
  creatorId: string | null;
}

export interface Holder extends LogRef {
  value: number;
  /** null: this holder is the baseline, nothing earlier to beat. */
  previousValue: number | null;
  position: number;
}

/** The holders of one member and exercise, by kind. */
export type Bests = Partial<Record<PrKind, Holder>>;

export interface PrFound {
  kind: PrKind;
  value: number;
  previousValue: number;
  position: number;
}

/**
 * The values a set counts for. Arithmetic runs on integer hundredths of a kilogram, so
 * equal loads × reps give bit-identical numbers (a tie is a tie) and distinct ones differ.
 */
export function setValues(set: Pick<WorkingSet, 'reps' | 'loadKg'>): Partial<Record<PrKind, number>> {
  const loadCents = Math.round(set.loadKg * 100);
  if (loadCents <= 0) return { max_reps: set.reps };
  return {
    max_load: loadCents / 100,
    est_1rm: set.reps === 1 ? loadCents / 100 : (loadCents * (30 + set.reps)) / 3000,
    max_volume: (loadCents * set.reps) / 100,
    max_reps: set.reps,
  };
}

/** Applies one log's sets of one exercise (in position order) to that exercise's holders. */
export function applyLog(bests: Bests, sets: readonly WorkingSet[], log: LogRef): { bests: Bests; prs: PrFound[] } {
  const next: Bests = { ...bests };
  const prs: PrFound[] = [];
  const ordered = sets.filter((s) => !s.isWarmup).sort((a, b) => a.position - b.position);
  for (const kind of PR_KINDS) {
    const candidates = ordered.flatMap((s) => {
      const value = setValues(s)[kind];
      return value === undefined ? [] : [{ position: s.position, value }];
    });
    if (candidates.length === 0) continue;
    let bestIndex = 0;
    candidates.forEach((c, i) => {
      if (c.value > candidates[bestIndex]!.value) bestIndex = i;
    });
    const best = candidates[bestIndex]!;
    const prior = bests[kind];
    let previousValue: number | null;
    if (prior) {
      if (best.value <= prior.value) continue; // a tie or less: the earlier holder keeps it
      previousValue = prior.value;
    } else if (bestIndex === 0) {
      previousValue = null; // the baseline
    } else {
      previousValue = Math.max(...candidates.slice(0, bestIndex).map((c) => c.value));
    }
    next[kind] = { ...log, value: best.value, previousValue, position: best.position };
    if (previousValue !== null) prs.push({ kind, value: best.value, previousValue, position: best.position });
  }
  return { bests: next, prs };
}

/** Holders rebuilt from a whole history: logs in time order, each with its sets. */
export function recompute(history: ReadonlyArray<{ log: LogRef; sets: readonly WorkingSet[] }>): { bests: Bests; prsByLog: Map<string, PrFound[]> } {
  let bests: Bests = {};
  const prsByLog = new Map<string, PrFound[]>();
  for (const { log, sets } of history) {
    const applied = applyLog(bests, sets, log);
    bests = applied.bests;
    if (applied.prs.length) prsByLog.set(log.logId, applied.prs);
  }
  return { bests, prsByLog };
}

/** Values as shown in the API: kilograms to 2 decimals (est_1rm is a fraction), reps whole. */
export const displayValue = (value: number): number => Math.round(value * 100) / 100;
