import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that run for minutes, or that only one of the two databases runs (so the other stage's
 * timings, which Vitest keeps between runs, call them instant): started first. Without this a
 * fresh clone (no timings yet) orders files by size, and the README walkthrough — small, but
 * 2–3 minutes of building and running two demos — started last and ran alone for its whole
 * length (the PGlite suite on a 2-core machine: 414 s, 374 s with this order).
 */
const LONG_FIRST = ['test/readme.test.ts', 'test/crash.test.ts', 'test/read-replicas.test.ts', 'src/modules/metrics/history-pass.test.ts'];

export default class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.findIndex((p) => f.moduleId.endsWith(p));
      return i < 0 ? LONG_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep Vitest's own order (longest known first).
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
