import { describe, expect, it } from 'vitest';
import { createCombiner } from './combiner.js';

/** A run function that records each batch and answers when told to. */
function recorder(answer: (item: string) => string = (i) => i.toUpperCase()) {
  const batches: string[][] = [];
  const pending: Array<() => void> = [];
  let running = 0;
  let maxRunning = 0;
  return {
    batches,
    maxRunning: () => maxRunning,
    /** Lets the oldest running batch finish. */
    finishOne: () => pending.shift()?.(),
    run: (items: string[]) => {
      batches.push(items);
      running++;
      maxRunning = Math.max(maxRunning, running);
      return new Promise<string[]>((resolve, reject) => {
        pending.push(() => {
          running--;
          try {
            resolve(items.map(answer));
          } catch (err) {
            reject(err);
          }
        });
      });
    },
  };
}

// Long enough for a finished batch's bookkeeping and the next cut (each a turn of the loop).
const tick = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};

describe('the statement combiner', () => {
  it('runs items submitted together as one batch and answers each its own result', async () => {
    const r = recorder();
    const c = createCombiner({ run: r.run, maxBatch: 10, maxInFlight: 1 });
    const answers = Promise.all(['a', 'b', 'c'].map((i) => c.submit(i)));
    await tick();
    r.finishOne();
    expect(await answers).toEqual(['A', 'B', 'C']);
    expect(r.batches).toEqual([['a', 'b', 'c']]);
  });

  it('gathers what arrives while a batch runs into the next one, no larger than maxBatch', async () => {
    const r = recorder();
    const c = createCombiner({ run: r.run, maxBatch: 2, maxInFlight: 1 });
    const first = c.submit('a');
    await tick();
    const later = ['b', 'c', 'd'].map((i) => c.submit(i));
    await tick();
    expect(r.batches).toEqual([['a']]);
    r.finishOne();
    expect(await first).toBe('A');
    await tick();
    r.finishOne();
    await tick();
    r.finishOne();
    expect(await Promise.all(later)).toEqual(['B', 'C', 'D']);
    expect(r.batches).toEqual([['a'], ['b', 'c'], ['d']]);
    expect(c.stats()).toEqual({ batches: 3, items: 4 });
  });

  it('runs at most maxInFlight batches at once', async () => {
    const r = recorder();
    const c = createCombiner({ run: r.run, maxBatch: 1, maxInFlight: 2 });
    const answers = Promise.all(['a', 'b', 'c', 'd'].map((i) => c.submit(i)));
    for (let i = 0; i < 4; i++) {
      await tick();
      r.finishOne();
    }
    expect(await answers).toEqual(['A', 'B', 'C', 'D']);
    expect(r.maxRunning()).toBe(2);
  });

  it('never puts two items of one key in a batch, nor runs them at once', async () => {
    const r = recorder();
    const c = createCombiner({ run: r.run, key: (i: string) => i[0], maxBatch: 10, maxInFlight: 4 });
    const answers = Promise.all(['m1', 'm2', 'n1', 'm3'].map((i) => c.submit(i)));
    await tick();
    // m2 and m3 wait behind m1 though slots are free: one member's logs run one at a time.
    expect(r.batches).toEqual([['m1', 'n1']]);
    r.finishOne();
    await tick();
    expect(r.batches).toEqual([['m1', 'n1'], ['m2']]);
    r.finishOne();
    await tick();
    r.finishOne();
    expect(await answers).toEqual(['M1', 'M2', 'N1', 'M3']);
    expect(r.batches).toEqual([['m1', 'n1'], ['m2'], ['m3']]);
  });

  it('when a batch fails, runs each item alone so only the failing one gets the error', async () => {
    const batches: string[][] = [];
    const c = createCombiner({
      run: async (items: string[]) => {
        batches.push(items);
        if (items.includes('bad')) throw new Error(`refused ${items.join(',')}`);
        return items.map((i) => i.toUpperCase());
      },
      maxBatch: 10,
      maxInFlight: 1,
    });
    const settled = await Promise.allSettled(['a', 'bad', 'c'].map((i) => c.submit(i)));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual(['A', 'refused bad', 'C']);
    expect(batches).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('answers every item of a batch with the error at once when the database is unavailable, without running each alone', async () => {
    let runs = 0;
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const c = createCombiner({
      run: async () => {
        runs++;
        throw down;
      },
      maxBatch: 10,
      maxInFlight: 1,
    });
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((i) => c.submit(i)));
    expect(settled.map((s) => s.status === 'rejected' && s.reason)).toEqual([down, down, down]);
    expect(runs).toBe(1);
  });
});
