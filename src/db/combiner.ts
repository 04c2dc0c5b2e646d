import { databaseFailure } from './errors.js';
import { onPrimary } from './read-routing.js';

/**
 * Group commit for a hot statement: requests that arrive while earlier ones are at the
 * database share one statement (and so one executor start-up, one round trip and one
 * commit) instead of queueing for a connection each.
 *
 * Batches form by themselves, with no timer: an item starts a batch at once (after the
 * current tick, so items parsed together go together) when fewer than `maxInFlight`
 * batches are running, and otherwise waits for one to finish. Idle, an item waits one
 * tick; busy, batches grow up to `maxBatch`.
 *
 * Items with the same `key` (a member, for logging) never share a batch nor run in two
 * batches at once: each waits for the previous one's batch to finish. Within a node that
 * keeps the batch's row locks free of cycles; across nodes the statement takes its locks
 * in key order.
 *
 * `run` answers one result per item, in order. When it throws, the batch is split and
 * each item runs alone (all at once), so one item's error (or a deadlock victim) never
 * fails the others and each caller gets its own answer or error — unless the database is
 * unavailable or timed out (src/db/errors.ts): then every item gets that error at once,
 * rather than each waiting for its own connection attempt to fail.
 */
export interface CombinerOptions<I, O> {
  run(items: I[]): Promise<O[]>;
  /** Items with one key run one after another; undefined: no ordering needed. */
  key?(item: I): string | undefined;
  maxBatch: number;
  maxInFlight: number;
  /** Told each batch's size as it starts (metrics). */
  onBatch?(size: number): void;
}

interface Waiting<I, O> {
  item: I;
  key: string | undefined;
  resolve(value: O): void;
  reject(err: unknown): void;
}

export interface Combiner<I, O> {
  submit(item: I): Promise<O>;
  /** Batches run so far and items they held (tests; metrics use onBatch). */
  stats(): { batches: number; items: number };
}

export function createCombiner<I, O>(opts: CombinerOptions<I, O>): Combiner<I, O> {
  const queue: Array<Waiting<I, O>> = [];
  const busyKeys = new Set<string>();
  let inFlight = 0;
  let scheduled = false;
  let batches = 0;
  let items = 0;

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    // setImmediate, not a microtask: requests read from the sockets in this poll phase
    // all reach submit() before the batch is cut.
    setImmediate(() => {
      scheduled = false;
      pump();
    });
  }

  function pump() {
    while (inFlight < opts.maxInFlight && queue.length) {
      const batch: Array<Waiting<I, O>> = [];
      const taken = new Set<string>();
      for (let i = 0; i < queue.length && batch.length < opts.maxBatch; ) {
        const w = queue[i]!;
        if (w.key !== undefined && (busyKeys.has(w.key) || taken.has(w.key))) {
          i++;
          continue;
        }
        if (w.key !== undefined) taken.add(w.key);
        batch.push(w);
        queue.splice(i, 1);
      }
      if (!batch.length) return; // everything waiting is behind a running batch of its key
      for (const k of taken) busyKeys.add(k);
      inFlight++;
      // Batches mix requests: on the primary, whichever request's turn started it (db/read-routing.ts).
      void onPrimary(() => execute(batch)).finally(() => {
        inFlight--;
        for (const k of taken) busyKeys.delete(k);
        if (queue.length) schedule();
      });
    }
  }

  async function execute(batch: Array<Waiting<I, O>>) {
    batches++;
    items += batch.length;
    opts.onBatch?.(batch.length);
    try {
      const results = await opts.run(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      if (batch.length === 1 || databaseFailure(err)) return batch.forEach((w) => w.reject(err));
      // Alone, each item gets its own answer or its own error.
      await Promise.all(
        batch.map((w) =>
          opts.run([w.item]).then(
            (results) => w.resolve(results[0]!),
            (own: unknown) => w.reject(own),
          ),
        ),
      );
    }
  }

  return {
    submit(item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, key: opts.key?.(item), resolve, reject });
        schedule();
      });
    },
    stats: () => ({ batches, items }),
  };
}
