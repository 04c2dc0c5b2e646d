import { sql } from 'kysely';
import type { Db } from '../db/client.js';
import { opaqueArray } from '../db/prepared.js';
import { deleteInRounds } from '../db/purge.js';
import type { Executor } from '../db/tx.js';

/** One key's row as a later request sees it. */
export interface KeyRow {
  request_hash: string;
  /** done: `response_body` is the answer as sent; data: the answer's data, which its route rebuilds (KeyedAnswer.replay). */
  state: 'in_progress' | 'done' | 'data';
  status_code: number | null;
  content_type: string | null;
  response_body: string | null;
  expired: boolean;
}

export interface KeyIdentity {
  scope: string;
  key: string;
}

/** A finished answer to store under a key, with the hash of the request it answers. */
export interface AnswerRecord extends KeyIdentity {
  hash: string;
  status: number;
  contentType: string | null;
  body: string;
}

/**
 * Raised inside a transaction whose key another request (one that committed first, or a
 * concurrent one whose transaction we waited for) already holds: the caller's transaction
 * rolls back, nothing of its effect is kept, and the request is answered from `row`.
 */
export class KeyTaken extends Error {
  constructor(readonly row: KeyRow | undefined) {
    super('the Idempotency-Key was stored by another request first');
  }
}

/**
 * The SQL of the idempotency store (table idempotency_keys, partitioned by day: migrations/0041).
 * A key's row is only ever committed together with the effect of the request it answers (or,
 * for an answer with no effect — a 4xx — on its own), so after any crash a key has either its
 * answer or nothing.
 *
 * Every writer takes the key's lock first (tribes_keys_locked) and reads the key in a snapshot
 * taken after it: a concurrent request with the same key waits until the first one's
 * transaction ends, then finds its answer. A key whose rows are all expired, or only a
 * committed `in_progress` claim (left by processes of an earlier design, which claimed keys in a
 * transaction of their own; nothing commits them any more), is stored again beside them: a key
 * may hold several rows until their day is dropped, and the newest counts.
 */
export function createIdempotencyStore(db: Db, ttlHours: number) {
  // Keys created before this have expired (the TTL); one fragment for every statement below.
  const expiry = sql`now() - make_interval(hours => ${ttlHours}::int)`;
  const locked = (scopes: string[], keys: string[]) => sql`tribes_keys_locked(${scopes}::text[], ${keys}::text[], ${ttlHours}::int)`;
  /** The rows of these keys that hold an answer (not expired, not an old claim), after taking their locks. */
  const held = (scopes: string[], keys: string[]) => sql`select * from ${locked(scopes, keys)} where state <> 'in_progress'`;

  return {
    ttlHours,

    /** The rows of these keys, one per item (undefined: none). One statement for the whole batch; no lock (a read before the effect). */
    async rowsOf(items: KeyIdentity[]): Promise<Array<KeyRow | undefined>> {
      const { rows } = await sql<KeyRow & KeyIdentity>`/*prepare:idempotency_lookup*/
        select distinct on (k.scope, k.key) k.scope, k.key, k.request_hash, k.state, k.status_code, k.content_type, k.response_body,
               k.created_at < ${expiry} as expired
        from unnest(${opaqueArray(items.map((i) => i.scope), 'text')}, ${opaqueArray(items.map((i) => i.key), 'text')}) as v(scope, key)
        join idempotency_keys k on k.scope = v.scope and k.key = v.key
        order by k.scope, k.key, k.created_at desc`.execute(db);
      return items.map((i) => rows.find((r) => r.scope === i.scope && r.key === i.key));
    },

    /**
     * Takes the key inside `trx`, before the effect: a concurrent request with the same key
     * waits here until this transaction ends, then finds the key taken. Throws KeyTaken.
     */
    async claim(trx: Executor, id: KeyIdentity & { hash: string }): Promise<void> {
      const { rows } = await sql<KeyRow>`with taken as (${held([id.scope], [id.key])}),
          claimed as (insert into idempotency_keys (scope, key, request_hash, state)
                      select ${id.scope}, ${id.key}, ${id.hash}, 'in_progress' where not exists (select 1 from taken))
        select request_hash, state, status_code, content_type, response_body, false as expired from taken`.execute(trx);
      if (rows.length) throw new KeyTaken(rows[0]);
    },

    /** Stores the answer of a key claimed in this same transaction (its row was stored at the transaction's now()). */
    async record(trx: Executor, answer: AnswerRecord): Promise<void> {
      await sql`update idempotency_keys set state = 'done', status_code = ${answer.status}, content_type = ${answer.contentType}, response_body = ${answer.body}
        where scope = ${answer.scope} and key = ${answer.key} and created_at = now()`.execute(trx);
    },

    /**
     * Stores finished answers whose keys were not claimed first (4xx answers, which have
     * no effect). Returns, per answer, whether it was stored: false
     * when another request holds the key.
     */
    async store(trx: Executor, answers: AnswerRecord[]): Promise<boolean[]> {
      const scopes = answers.map((a) => a.scope);
      const keys = answers.map((a) => a.key);
      const { rows } = await sql<KeyIdentity>`/*prepare:idempotency_store*/
        with taken as (${held(scopes, keys)})
        insert into idempotency_keys (scope, key, request_hash, state, status_code, content_type, response_body)
        select t.scope, t.key, t.request_hash, 'done', t.status, t.content_type, t.body
        from unnest(${scopes}::text[], ${keys}::text[], ${answers.map((a) => a.hash)}::text[],
                    ${answers.map((a) => a.status)}::int[], ${answers.map((a) => a.contentType)}::text[], ${answers.map((a) => a.body)}::text[])
             as t(scope, key, request_hash, status, content_type, body)
        where not exists (select 1 from taken x where x.scope = t.scope and x.key = t.key)
        returning scope, key`.execute(trx);
      return answers.map((a) => rows.some((r) => r.scope === a.scope && r.key === a.key));
    },

    /**
     * Drops the partitions whose keys have all expired, creates the next one, and deletes the
     * expired keys of the default partition (days that had no partition of their own) in
     * bounded rounds. Each DDL waits at most LOCK_WAIT for its lock, so the keyed
     * requests queued behind it wait no longer; one not granted is left for the next run.
     */
    async purgeExpired(maxRounds = 20): Promise<{ partitionsDropped: number; rowsDeleted: number }> {
      const partitionsDropped = await db.transaction().execute(async (trx) => {
        await sql`select set_config('lock_timeout', ${LOCK_WAIT}, true)`.execute(trx);
        const { rows } = await sql<{ dropped: number }>`select tribes_key_partitions_drop(${ttlHours}::int) as dropped,
          tribes_key_partitions_create(tribes_key_starts(${PARTITIONS_AHEAD}::int)) as made`.execute(trx);
        return rows[0]!.dropped;
      });
      const rowsDeleted = await deleteInRounds(db, 'idempotency_keys_default', sql`created_at < ${expiry}`, 'created_at', { maxRounds });
      return { partitionsDropped, rowsDeleted };
    },
  };
}

/** How long the purge's partition DDL waits for the table's lock (keyed requests queue behind it meanwhile). */
const LOCK_WAIT = '200ms';
/** Partitions (days) made ahead of the current one; the purge runs every minute. */
const PARTITIONS_AHEAD = 1;

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
