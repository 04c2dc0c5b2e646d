import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/client.js';
import { createCombiner } from '../db/combiner.js';
import { every } from '../jobs/tasks.js';
import type { Principal } from './auth.js';
import { AppError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { scope: string; key: string };
  }
}

export interface IdempotencyOptions {
  db: Db;
  ttlHours: number;
  /** An in-progress claim older than this is taken to be abandoned (its process died). */
  staleAfterMs?: number;
  /** Observers of the batched statements' sizes, by statement (metrics). */
  onBatch?: (statement: string) => (size: number) => void;
}

const PURGE_INTERVAL_MS = 60_000;
const PURGE_BATCH = 5_000;

/**
 * Deletes the keys older than the TTL, oldest first (index idempotency_keys_created_idx), in
 * rounds of PURGE_BATCH rows so no statement holds many locks or runs long; rows another
 * node is purging are skipped. Returns how many it deleted.
 */
export async function purgeExpiredKeys(db: Db, ttlHours: number, maxRounds = 20): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < maxRounds; round++) {
    // By ctid (locked, so stable within the statement): a `(scope, key) in (...)` form gets a
    // hash join over the whole table once it is large.
    const result = await sql`delete from idempotency_keys where ctid = any(array(
        select ctid from idempotency_keys where created_at < now() - make_interval(hours => ${ttlHours})
        order by created_at limit ${PURGE_BATCH} for update skip locked))`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < PURGE_BATCH) break;
  }
  return deleted;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const scopeOf = (p: Principal | null): string =>
  p?.kind === 'creator' ? `creator:${p.creatorId}` : p?.kind === 'member' ? `member:${p.memberId}` : (p?.kind ?? 'anonymous');

function requestHash(request: FastifyRequest): string {
  return crypto
    .createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('hex');
}

/**
 * Idempotency-Key on POST, Stripe's way. The first request with a key claims it with an
 * INSERT .. ON CONFLICT DO NOTHING, so of two concurrent requests exactly one executes;
 * the other is told the key is in use. The finished response is stored and replayed byte
 * for byte for 24 h to a retry with the same body; another body under the key is 409.
 * Requests that fail validation or authentication never claim a key (these hooks run
 * after both), and a 5xx releases the claim so the client can retry.
 */
export function registerIdempotency(app: FastifyInstance, opts: IdempotencyOptions): void {
  const { db } = opts;
  // Expired keys go in the background; without it the table would keep every key forever.
  const stopPurging = every(PURGE_INTERVAL_MS, () => purgeExpiredKeys(db, opts.ttlHours), app.log, 'idempotency key purge');
  app.addHook('onClose', stopPurging);
  const staleAfterMs = opts.staleAfterMs ?? 60_000;
  const ttl = sql`make_interval(hours => ${opts.ttlHours})`;

  // Claims and stored answers of requests that arrive together share one statement each
  // (src/db/combiner.ts): a keyed POST costs two commits per batch, not two per request.
  // One key is never claimed twice in a batch (the key orders them). Constant texts, so
  // prepared once per connection (src/db/prepared.ts).
  const oneKeyAtATime = { key: (i: { scope: string; key: string }) => `${i.scope}\n${i.key}`, maxBatch: 64, maxInFlight: 2 };
  const claims = createCombiner<{ scope: string; key: string; hash: string }, boolean>({
    run: async (items) => {
      const { rows } = await sql<{ scope: string; key: string }>`/*prepare:idempotency_claims*/
        insert into idempotency_keys (scope, key, request_hash, state)
        select scope, key, request_hash, 'in_progress'
        from unnest(${items.map((i) => i.scope)}::text[], ${items.map((i) => i.key)}::text[], ${items.map((i) => i.hash)}::text[]) as t(scope, key, request_hash)
        on conflict (scope, key) do nothing
        returning scope, key`.execute(db);
      return items.map((i) => rows.some((r) => r.scope === i.scope && r.key === i.key));
    },
    ...oneKeyAtATime,
    onBatch: opts.onBatch?.('idempotency_claim'),
  });
  const records = createCombiner<{ scope: string; key: string; status: number; contentType: string | null; body: string }, undefined>({
    run: async (items) => {
      await sql`/*prepare:idempotency_records*/
        update idempotency_keys k set state = 'done', status_code = v.status, content_type = v.content_type, response_body = v.body
        from unnest(${items.map((i) => i.scope)}::text[], ${items.map((i) => i.key)}::text[], ${items.map((i) => i.status)}::int[],
                    ${items.map((i) => i.contentType)}::text[], ${items.map((i) => i.body)}::text[]) as v(scope, key, status, content_type, body)
        where k.scope = v.scope and k.key = v.key`.execute(db);
      return items.map(() => undefined);
    },
    ...oneKeyAtATime,
    onBatch: opts.onBatch?.('idempotency_record'),
  });
  const claim = (scope: string, key: string, hash: string) => claims.submit({ scope, key, hash });

  app.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST') return;
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw new AppError('validation_error', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters without spaces.', [
        { field: 'Idempotency-Key', message: 'is malformed' },
      ]);
    }
    const scope = scopeOf(request.principal);
    const hash = requestHash(request);

    // Two rounds at most: an expired or vanished row is cleared and the claim retried once.
    for (let round = 0; round < 2; round++) {
      if (await claim(scope, key, hash)) {
        request.idempotency = { scope, key };
        return;
      }
      const row = await db
        .selectFrom('idempotency_keys')
        .select([
          'request_hash',
          'state',
          'status_code',
          'content_type',
          'response_body',
          'locked_at',
          sql<boolean>`created_at < now() - ${ttl}`.as('expired'),
          sql<boolean>`locked_at < now() - make_interval(secs => ${staleAfterMs / 1000})`.as('stale'),
        ])
        .where('scope', '=', scope)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!row) continue;
      if (row.expired) {
        await db.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key).where(sql<boolean>`created_at < now() - ${ttl}`).execute();
        continue;
      }
      if (row.request_hash !== hash) {
        throw new AppError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used with a different request. Use a new key for a new request.',
        );
      }
      if (row.state === 'done') {
        reply.header('idempotent-replayed', 'true').code(row.status_code ?? 200);
        if (row.content_type) reply.header('content-type', row.content_type);
        return reply.send(row.response_body);
      }
      if (row.stale) {
        // The request that claimed the key died before answering; take the claim over.
        const taken = await db
          .updateTable('idempotency_keys')
          .set({ locked_at: new Date() })
          .where('scope', '=', scope)
          .where('key', '=', key)
          .where('locked_at', '=', row.locked_at)
          .returning('key')
          .executeTakeFirst();
        if (taken) {
          request.idempotency = { scope, key };
          return;
        }
      }
      throw new AppError(
        'idempotency_key_in_use',
        'Another request with this Idempotency-Key is still in progress. Retry once it has finished.',
        undefined,
        { 'Retry-After': '1' },
      );
    }
    throw new AppError('idempotency_key_in_use', 'This Idempotency-Key is changing hands; retry shortly.', undefined, { 'Retry-After': '1' });
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claimed = request.idempotency;
    if (!claimed) return payload;
    request.idempotency = undefined;
    try {
      if (reply.statusCode >= 500 || typeof payload !== 'string') {
        await db.deleteFrom('idempotency_keys').where('scope', '=', claimed.scope).where('key', '=', claimed.key).execute();
      } else {
        const contentType = reply.getHeader('content-type');
        await records.submit({ ...claimed, status: reply.statusCode, contentType: typeof contentType === 'string' ? contentType : null, body: payload });
      }
    } catch (err) {
      // The response itself is fine; a claim left in progress is taken over once stale.
      request.log.warn({ err }, 'could not record the idempotent response');
    }
    return payload;
  });
}
