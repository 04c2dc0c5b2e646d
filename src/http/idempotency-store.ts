import { sql } from 'kysely';
import type { Db } from '../db/client.js';
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
 * The SQL of the idempotency store (table idempotency_keys). A key's row is only ever
 * committed together with the effect of the request it answers (or, for an answer with no
 * effect — a 4xx — on its own), so after any crash a key has either its answer or nothing.
 *
 * A row may be written over when it expired (older than the TTL, not yet purged) or when it
 * is a committed `in_progress` claim: those were left by processes of the previous design,
 * which claimed keys in a transaction of their own; nothing commits them any more.
 */
export function createIdempotencyStore(db: Db, ttlHours: number) {
  // Keys created before this have expired (the TTL); one fragment for every statement below.
  const expiry = sql`now() - make_interval(hours => ${ttlHours}::int)`;
  const replaceable = sql`idempotency_keys.created_at < ${expiry} or idempotency_keys.state = 'in_progress'`;

  async function rowOf(scope: string, key: string, trx: Executor = db): Promise<KeyRow | undefined> {
    return trx
      .selectFrom('idempotency_keys')
      .select([
        'request_hash',
        'state',
        'status_code',
        'content_type',
        'response_body',
        sql<boolean>`created_at < ${expiry}`.as('expired'),
      ])
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirst();
  }

  return {
    ttlHours,
    rowOf,

    /** The rows of these keys, one per item (undefined: none). One statement for the whole batch. */
    async rowsOf(items: KeyIdentity[]): Promise<Array<KeyRow | undefined>> {
      const { rows } = await sql<KeyRow & KeyIdentity>`/*prepare:idempotency_lookup*/
        select k.scope, k.key, k.request_hash, k.state, k.status_code, k.content_type, k.response_body,
               k.created_at < ${expiry} as expired
        from unnest(${items.map((i) => i.scope)}::text[], ${items.map((i) => i.key)}::text[]) as v(scope, key)
        join idempotency_keys k on k.scope = v.scope and k.key = v.key`.execute(db);
      return items.map((i) => rows.find((r) => r.scope === i.scope && r.key === i.key));
    },

    /**
     * Takes the key inside `trx`, before the effect: a concurrent request with the same key
     * waits here until this transaction ends, then finds the key taken. Throws KeyTaken.
     */
    async claim(trx: Executor, id: KeyIdentity & { hash: string }): Promise<void> {
      const taken = await sql<{ key: string }>`
        insert into idempotency_keys as idempotency_keys (scope, key, request_hash, state)
        values (${id.scope}, ${id.key}, ${id.hash}, 'in_progress')
        on conflict (scope, key) do update set request_hash = excluded.request_hash, state = 'in_progress', status_code = null,
          content_type = null, response_body = null, created_at = now(), locked_at = now()
        where ${replaceable}
        returning key`.execute(trx);
      if (!taken.rows.length) throw new KeyTaken(await rowOf(id.scope, id.key, trx));
    },

    /** Stores the answer of a key claimed in this same transaction. */
    async record(trx: Executor, answer: AnswerRecord): Promise<void> {
      await trx
        .updateTable('idempotency_keys')
        .set({ state: 'done', status_code: answer.status, content_type: answer.contentType, response_body: answer.body })
        .where('scope', '=', answer.scope)
        .where('key', '=', answer.key)
        .execute();
    },

    /**
     * Stores finished answers whose keys were not claimed first (4xx answers, which have
     * no effect). Returns, per answer, whether it was stored: false
     * when another request holds the key.
     */
    async store(trx: Executor, answers: AnswerRecord[]): Promise<boolean[]> {
      const { rows } = await sql<KeyIdentity>`/*prepare:idempotency_store*/
        insert into idempotency_keys as idempotency_keys (scope, key, request_hash, state, status_code, content_type, response_body)
        select scope, key, request_hash, 'done', status, content_type, body
        from unnest(${answers.map((a) => a.scope)}::text[], ${answers.map((a) => a.key)}::text[], ${answers.map((a) => a.hash)}::text[],
                    ${answers.map((a) => a.status)}::int[], ${answers.map((a) => a.contentType)}::text[], ${answers.map((a) => a.body)}::text[])
             as t(scope, key, request_hash, status, content_type, body)
        on conflict (scope, key) do update set request_hash = excluded.request_hash, state = 'done', status_code = excluded.status_code,
          content_type = excluded.content_type, response_body = excluded.response_body, created_at = now(), locked_at = now()
        where ${replaceable}
        returning scope, key`.execute(trx);
      return answers.map((a) => rows.some((r) => r.scope === a.scope && r.key === a.key));
    },

    /** Deletes the keys older than the TTL, oldest first (index idempotency_keys_created_idx), in bounded rounds. */
    purgeExpired: (maxRounds = 20) =>
      deleteInRounds(db, 'idempotency_keys', sql`created_at < ${expiry}`, 'created_at', { maxRounds }),
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
