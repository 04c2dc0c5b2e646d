import { expireSession } from './checkout.js';
import type { Core } from './core.js';
import { advancePayout, runAutoPayout } from './payouts.js';
import { readNow, findObject, writeNow, type Ctx } from './store.js';
import { retryInvoice, runCycle, trialWillEnd } from './subscriptions.js';

async function dispatch(ctx: Ctx, kind: string, ref: string, payload: any): Promise<void> {
  switch (kind) {
    case 'sub_cycle':
      return runCycle(ctx, ref);
    case 'trial_will_end':
      return trialWillEnd(ctx, ref);
    case 'invoice_retry':
      return retryInvoice(ctx, ref, payload);
    case 'payout_transit':
      return advancePayout(ctx, ref, 'in_transit');
    case 'payout_paid':
      return advancePayout(ctx, ref, 'paid');
    case 'auto_payout':
      return runAutoPayout(ctx, ref);
    case 'session_expire': {
      const session = await findObject(ctx, ref, { type: 'checkout.session', forUpdate: true });
      if (session) await expireSession(ctx, session, false);
      return;
    }
    default:
      throw new Error(`unknown simulator job kind ${kind}`);
  }
}

/**
 * Runs every pending job due at or before `upTo`, one at a time in (due_at, id) order, each
 * in its own transaction at its own due time — so a renewal invoice is dated at the period
 * boundary, a payout created by one job is seen by the job that moves it a day later, and
 * events come out in time order. The caller must hold the core lock.
 */
export async function runDueJobs(core: Core, upTo: number): Promise<string[]> {
  const { db, schema } = core.env;
  const events: string[] = [];
  for (;;) {
    const job = await db
      .withSchema(schema)
      .selectFrom('jobs')
      .selectAll()
      .where('status', '=', 'pending')
      .where('due_at', '<=', upTo)
      .orderBy('due_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (!job) return events;
    const at = Math.max(Number(job.due_at), await readNow(db, schema));
    try {
      const done = await core.mutateLocked({ account: job.account, at }, async (ctx) => {
        // The clock itself moves with the job, so API reads made while its events are
        // being delivered see the time the job happened at.
        await writeNow(ctx.db, schema, at);
        await ctx.db.withSchema(schema).updateTable('jobs').set({ status: 'done' }).where('id', '=', job.id).execute();
        await dispatch(ctx, job.kind, job.ref, job.payload);
      });
      events.push(...done.events);
    } catch (err) {
      // A job that cannot run must not wedge the clock; it is parked and logged.
      core.env.logger?.error({ err, job: { id: job.id, kind: job.kind, ref: job.ref } }, 'simulator job failed');
      await db.withSchema(schema).updateTable('jobs').set({ status: 'failed' }).where('id', '=', job.id).execute();
    }
  }
}

/** POST /v1/test_helpers/clock/advance: processes everything due on the way, then sets the clock. */
export async function advanceClock(core: Core, seconds: number): Promise<{ now: number; events: string[] }> {
  const { db, schema } = core.env;
  const result = await core.lock.run(async () => {
    const target = (await readNow(db, schema)) + seconds;
    const events = await runDueJobs(core, target);
    await writeNow(db, schema, target);
    return { now: target, events };
  });
  await core.deliverer.deliverEvents(result.events);
  return result;
}

/**
 * Between advances the simulator clock follows the wall clock, so jobs also come due in
 * real time (a payout day passing while the simulator runs); this ticker runs them.
 */
export class JobTicker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly core: Core, private readonly everyMs = 1000) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running || this.closed) return;
      this.running = this.tick().finally(() => (this.running = undefined));
    }, this.everyMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      const events = await this.core.lock.run(async () => (this.closed ? [] : runDueJobs(this.core, await this.core.now())));
      if (events.length) await this.core.deliverer.deliverEvents(events);
    } catch (err) {
      if (!this.closed) this.core.env.logger?.warn({ err }, 'simulator job tick failed');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
