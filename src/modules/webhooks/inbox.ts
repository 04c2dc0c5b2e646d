import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';

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

const MAX_BACKOFF_SECONDS = 3600;

export function createInbox({ db, handlers, logger }: { db: Db; handlers: Record<string, EventHandler>; logger: Logger }) {
  /** Claims one due event (a given one, or the oldest due) with a 60 s lease; any node may run this. */
  async function claim(id?: string) {
    const due = db
      .selectFrom('webhook_events')
      .select('id')
      .where('processed_at', 'is', null)
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
      // Leased events belong to whoever claimed them until the lease runs out.
      .where('next_attempt_at', '<=', sql<Date>`now()`)
      .returning(['id', 'type', 'payload', 'attempts'])
      .executeTakeFirst();
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
      const delay = Math.min(MAX_BACKOFF_SECONDS, 5 * 2 ** Math.min(claimed.attempts, 12));
      logger.warn({ err, event: claimed.id, type: claimed.type, attempts: claimed.attempts }, 'processor event failed; will retry');
      await db
        .updateTable('webhook_events')
        .set({ last_error: err instanceof Error ? err.message.slice(0, 500) : String(err), next_attempt_at: sql`now() + make_interval(secs => ${delay})` })
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

    /** Processes one recorded event now (right after it was acknowledged). */
    async process(id: string): Promise<void> {
      const claimed = await claim(id);
      if (claimed) await run(claimed);
    },

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
