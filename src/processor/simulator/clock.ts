import { expireSession } from './checkout.js';
import type { Core } from './core.js';
import { DEADLINE_JOB, requirementsDeadline } from './onboarding.js';
import { advancePayout, runAutoPayout } from './payouts.js';
import { sql } from 'kysely';
import { readNow, findObject, writeAccountNow, writeNow, type Ctx } from './store.js';
import { retryInvoice, runCycle, trialWillEnd } from './subscriptions.js';
import { PENDING_UPDATE_JOB } from './plan-change.js';
import { expirePendingUpdate } from './pending-update.js';

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
    case PENDING_UPDATE_JOB:
      return expirePendingUpdate(ctx, ref, payload);
    case DEADLINE_JOB:
      return requirementsDeadline(ctx, ref, payload);
    case 'session_expire': {
      const session = await findObject(ctx, ref, { type: 'checkout.session', forUpdate: true });
      if (session) await expireSession(ctx, session, false);
      return;
    }
    default:
      throw new Error(`unknown simulator job kind ${kind}`);
  }
}

interface DueJob {
  id: string;
  due_at: string;
  kind: string;
  ref: string;
  account: string;
  payload: any;
  own_clock: boolean;
  clock_offset: string;
}

/**
 * The next pending job due by `upTo`. On the shared clock (no `account`) an account with its
 * own clock has its jobs compared in shared time (due_at − its offset), so every account's
 * work comes out in one time order; with `account`, only that account's jobs, in its time.
 */
async function nextDueJob(core: Core, upTo: number, account: string | undefined): Promise<DueJob | undefined> {
  const { db, schema } = core.env;
  const jobs = sql.table(`${schema}.jobs`);
  const clocks = sql.table(`${schema}.account_clocks`);
  const { rows } =
    account === undefined
      ? await sql<DueJob>`
          select j.*, a.account is not null as own_clock, coalesce(a.offset_seconds, 0) as clock_offset
          from ${jobs} j left join ${clocks} a on a.account = j.account
          where j.status = 'pending' and j.due_at - coalesce(a.offset_seconds, 0) <= ${upTo}
          order by j.due_at - coalesce(a.offset_seconds, 0), j.id limit 1`.execute(db)
      : await sql<DueJob>`
          select j.*, true as own_clock, 0 as clock_offset from ${jobs} j
          where j.status = 'pending' and j.account = ${account} and j.due_at <= ${upTo}
          order by j.due_at, j.id limit 1`.execute(db);
  return rows[0];
}

/**
 * Runs every pending job due at or before `upTo`, one at a time in due order, each in its
 * own transaction at its own due time — so a renewal invoice is dated at the period
 * boundary, a payout created by one job is seen by the job that moves it a day later, and
 * events come out in time order. `upTo` is shared-clock time, or with `account` that
 * account's own time (only its jobs run). The caller must hold the core lock.
 */
export async function runDueJobs(core: Core, upTo: number, account?: string): Promise<string[]> {
  const { db, schema } = core.env;
  const events: string[] = [];
  for (;;) {
    const job = await nextDueJob(core, upTo, account);
    if (!job) return events;
    const at = Math.max(Number(job.due_at), await readNow(db, schema, job.account));
    try {
      const done = await core.mutateLocked({ account: job.account, at }, async (ctx) => {
        // The clock itself moves with the job, so API reads made while its events are
        // being delivered see the time the job happened at: the account's own clock when
        // advancing it alone, else the shared one (to the job's time in shared terms).
        if (account !== undefined) await writeAccountNow(ctx.db, schema, account, at);
        else await writeNow(ctx.db, schema, job.own_clock ? at - Number(job.clock_offset) : at);
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
 * POST /v1/test_helpers/accounts/{id}/clock/advance: moves one account's own clock (giving it
 * one at the shared time if it has none), running its due work on the way. Other accounts
 * and the shared clock stay where they are.
 */
export async function advanceAccountClock(core: Core, account: string, seconds: number): Promise<{ now: number; events: string[] }> {
  const { db, schema } = core.env;
  const result = await core.lock.run(async () => {
    const target = (await readNow(db, schema, account)) + seconds;
    const events = await runDueJobs(core, target, account);
    await writeAccountNow(db, schema, account, target);
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
