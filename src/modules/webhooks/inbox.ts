import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import { deleteInRounds } from '../../db/purge.js';
import type { Executor } from '../../db/tx.js';
import { LAST_ERROR_MAX } from './webhook-events.schemas.js';

export interface ProcessorEvent {
  id: string;
  type: string;
  account?: string | null;
  data: { object: Record<string, unknown> & { id?: string } };
}

/**
 * A handler reads what it needs from the processor (outside any transaction) and returns
 * the effect to write; the inbox writes it in the same transaction that marks the event
 * processed, so an event's effect is applied exactly once.
 */
export type EffectOf = (trx: Executor) => Promise<void>;
export type EventHandler = (event: ProcessorEvent) => Promise<EffectOf | undefined>;

/** Backoff doubles from 5 s up to 8 h: the default 20 attempts span about three days. */
const MAX_BACKOFF_SECONDS = 8 * 3600;

export interface InboxOptions {
  db: Db;
  handlers: Record<string, EventHandler>;
  logger: Logger;
  /** Failed attempts after which an event is parked as dead (an operator retries it). */
  maxAttempts?: number;
  /** Events processed at once by this node right after acknowledging them; the rest wait for the poller. */
  maxConcurrent?: number;
}

export type EventStatus = 'pending' | 'processed' | 'dead';

export function createInbox({ db, handlers, logger, maxAttempts = 20, maxConcurrent = 4 }: InboxOptions) {
  let inFlight = 0;
  /** Claims one due event (a given one, or the oldest due) with a 60 s lease; any node may run this. */
  async function claim(id?: string) {
    const due = db
      .selectFrom('webhook_events')
      .select('id')
      .where('processed_at', 'is', null)
      .where('dead_at', 'is', null)
      .where('next_attempt_at', '<=', sql<Date>`now()`)
      .orderBy('next_attempt_at')
      .limit(1)
      .forUpdate()
      .skipLocked();
    return db
      .updateTable('webhook_events')
      .set({ attempts: sql`attempts + 1`, next_attempt_at: sql`now() + interval '60 seconds'` })
      .where('id', '=', id ?? due)
      .where('processed_at', 'is', null)
      .where('dead_at', 'is', null)
      // Leased events belong to whoever claimed them until the lease runs out.
      .where('next_attempt_at', '<=', sql<Date>`now()`)
      .returning(['id', 'type', 'payload', 'attempts'])
      .executeTakeFirst();
  }

  function filtered(status: EventStatus) {
    const q = db.selectFrom('webhook_events');
    if (status === 'dead') return q.where('dead_at', 'is not', null);
    if (status === 'processed') return q.where('processed_at', 'is not', null);
    return q.where('processed_at', 'is', null).where('dead_at', 'is', null);
  }

  async function run(claimed: { id: string; type: string; payload: unknown; attempts: number }): Promise<void> {
    const event = claimed.payload as ProcessorEvent;
    try {
      const effect = await handlers[event.type]?.(event);
      await db.transaction().execute(async (trx) => {
        if (effect) await effect(trx);
        await trx.updateTable('webhook_events').set({ processed_at: new Date(), last_error: null }).where('id', '=', claimed.id).execute();
      });
    } catch (err) {
      const lastError = (err instanceof Error ? err.message : String(err)).slice(0, LAST_ERROR_MAX);
      if (claimed.attempts >= maxAttempts) {
        logger.error({ err, event: claimed.id, type: claimed.type, attempts: claimed.attempts }, 'processor event parked as dead after its last attempt');
        await db.updateTable('webhook_events').set({ last_error: lastError, dead_at: new Date() }).where('id', '=', claimed.id).execute();
        return;
      }
      const delay = Math.min(MAX_BACKOFF_SECONDS, 5 * 2 ** Math.min(claimed.attempts - 1, 20));
      logger.warn({ err, event: claimed.id, type: claimed.type, attempts: claimed.attempts }, 'processor event failed; will retry');
      await db
        .updateTable('webhook_events')
        .set({ last_error: lastError, next_attempt_at: sql`now() + make_interval(secs => ${delay})` })
        .where('id', '=', claimed.id)
        .execute();
    }
  }

  return {
    /** Records a verified event; false when it was already recorded (a redelivery). */
    async record(event: ProcessorEvent): Promise<boolean> {
      const inserted = await db
        .insertInto('webhook_events')
        .values({ id: event.id, type: event.type, account: event.account ?? null, payload: JSON.stringify(event) })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    /**
     * Processes one recorded event now (right after it was acknowledged), unless this node
     * already processes `maxConcurrent` of them: then the poller takes it (it is durable), so
     * a burst of events never fans out into unbounded processor reads and pool waits.
     */
    async process(id: string): Promise<void> {
      if (inFlight >= maxConcurrent) return;
      inFlight++;
      try {
        const claimed = await claim(id);
        if (claimed) await run(claimed);
      } finally {
        inFlight--;
      }
    },

    /** Events by status, newest first (ties by id), for operators. */
    async list(status: EventStatus, offset: number, limit: number) {
      const base = filtered(status);
      const [rows, total] = await Promise.all([
        base.select(['id', 'type', 'account', 'received_at', 'processed_at', 'dead_at', 'attempts', 'next_attempt_at', 'last_error']).orderBy('received_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
        base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: total.n };
    },

    /** Dead events put back in the queue (one, or all): due now, with a fresh set of attempts. */
    async retry(id?: string): Promise<number> {
      let q = db.updateTable('webhook_events').set({ dead_at: null, attempts: 0, next_attempt_at: sql`now()` }).where('dead_at', 'is not', null);
      if (id) q = q.where('id', '=', id);
      return Number((await q.executeTakeFirst()).numUpdatedRows);
    },

    async deadCount(): Promise<number> {
      return (await filtered('dead').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
    },

    /** Deletes events processed more than `retentionDays` ago, oldest first, in bounded rounds. */
    purgeProcessed: (retentionDays: number, maxRounds = 20) =>
      deleteInRounds(db, 'webhook_events', sql`processed_at < now() - make_interval(days => ${retentionDays})`, 'processed_at', { maxRounds }),

    /** Processes every due event (retries, events left by a crash); returns how many. */
    async drain(limit = 1000): Promise<number> {
      let n = 0;
      for (; n < limit; n++) {
        const claimed = await claim();
        if (!claimed) break;
        await run(claimed);
      }
      return n;
    },
  };
}

export type Inbox = ReturnType<typeof createInbox>;
