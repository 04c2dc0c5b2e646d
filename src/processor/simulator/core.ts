import type { Kysely } from 'kysely';
import { Deliverer } from './webhooks.js';
import { readNow, type Ctx, type Env } from './store.js';

/** A FIFO async lock: one state-changing unit of work at a time in this process. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

export interface WorkOptions {
  account: string;
  request?: Ctx['request'];
  /** Run at this simulator time instead of the current one (clock-driven jobs). */
  at?: number;
}

/**
 * The simulator's shared state. State changes are serialised by one mutex (so read-then-
 * write sequences such as "balance ≥ amount, then debit" cannot interleave) and each runs
 * in one database transaction. Webhook deliveries happen only after the transaction has
 * committed and the lock is released: the receiver may well call back into the simulator.
 */
export class Core {
  readonly lock = new Mutex();
  readonly deliverer: Deliverer;

  constructor(readonly env: Env) {
    this.deliverer = new Deliverer(env);
  }

  get db(): Kysely<any> {
    return this.env.db;
  }

  /** The shared clock, or `account`'s own when it has one. */
  now(account = ''): Promise<number> {
    return readNow(this.env.db, this.env.schema, account);
  }

  /** Runs `fn` in a transaction under the lock; returns its result and the events it emitted. */
  mutate<T>(opts: WorkOptions, fn: (ctx: Ctx) => Promise<T>): Promise<{ result: T; events: string[] }> {
    return this.lock.run(() => this.mutateLocked(opts, fn));
  }

  /** For callers already holding the lock (the clock loop). */
  async mutateLocked<T>(opts: WorkOptions, fn: (ctx: Ctx) => Promise<T>): Promise<{ result: T; events: string[] }> {
    return this.env.db.transaction().execute(async (trx) => {
      const ctx: Ctx = {
        env: this.env,
        db: trx,
        now: opts.at ?? (await readNow(trx, this.env.schema, opts.account)),
        account: opts.account,
        request: opts.request ?? { id: null, idempotency_key: null },
        events: [],
      };
      const result = await fn(ctx);
      return { result, events: ctx.events };
    });
  }

  /** Read-only work: no lock, no transaction. */
  async read<T>(account: string, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
    const ctx: Ctx = {
      env: this.env,
      db: this.env.db,
      now: await readNow(this.env.db, this.env.schema, account),
      account,
      request: { id: null, idempotency_key: null },
      events: [],
    };
    return fn(ctx);
  }
}
