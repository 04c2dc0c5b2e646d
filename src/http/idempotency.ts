import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/client.js';
import { createCombiner } from '../db/combiner.js';
import type { StoredAnswer } from '../db/tx.js';
import type { Principal } from './auth.js';
import { AppError } from './errors.js';
import { createIdempotencyStore, KeyTaken, type AnswerRecord, type IdempotencyStore, type KeyIdentity, type KeyRow } from './idempotency-store.js';

export { KeyTaken } from './idempotency-store.js';

/** A keyed POST on its way: who sent it, the key, the hash of what was sent. */
export interface KeyedRequest {
  scope: string;
  key: string;
  hash: string;
  /** Set once the answer is stored (with the effect, or as the replay of a stored one). */
  answered?: boolean;
  /** The body last serialized for storing (sent as is once stored: see sendData). */
  body?: string;
  store: IdempotencyStore;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: KeyedRequest;
  }
  interface FastifyContextConfig {
    /**
     * `in-effect`: the route's effect looks its key up itself, in the statement that writes
     * it (the logging batch), so the hook does not read it first: one round trip fewer.
     */
    idempotency?: 'in-effect';
  }
}

export interface IdempotencyOptions {
  db: Db;
  ttlHours: number;
  /** Observers of the batched statements' sizes, by statement (metrics). */
  onBatch?: (statement: string) => (size: number) => void;
}


/** Drops or deletes the keys older than the TTL and makes the next day's partition (the minute poller calls it; tests too). */
export const purgeExpiredKeys = (db: Db, ttlHours: number, maxRounds = 20) =>
  createIdempotencyStore(db, ttlHours).purgeExpired(maxRounds);

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const keyReused = () =>
  new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request. Use a new key for a new request.');

const scopeOf = (p: Principal | null): string =>
  p?.kind === 'creator' ? `creator:${p.creatorId}` : p?.kind === 'member' ? `member:${p.memberId}` : (p?.kind ?? 'anonymous');

function requestHash(request: FastifyRequest): string {
  return crypto
    .createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('hex');
}

/** Marks the reply as a replay of the stored answer `row`, with its status. */
const replayedAs = (reply: FastifyReply, row: KeyRow) => reply.header('idempotent-replayed', 'true').code(row.status_code ?? 200);

/**
 * The answer a key already holds, for a request with `hash`: the stored answer (replayed
 * byte for byte), or 409 when the key answered another request. Undefined when the key
 * holds nothing that counts (no row, expired, or an old claim nothing will finish).
 */
function answerFromRow(row: KeyRow | undefined, hash: string, reply: FastifyReply): FastifyReply | undefined {
  if (!row || row.expired || row.state === 'in_progress') return undefined;
  if (row.request_hash !== hash) throw keyReused();
  // 'data': only the route that stored it rebuilds its answer (KeyedAnswer.replay).
  if (row.state !== 'done') return undefined;
  replayedAs(reply, row);
  if (row.content_type) reply.header('content-type', row.content_type);
  return reply.send(row.response_body);
}

/**
 * Answers a request whose effect found its key taken inside the transaction (KeyTaken): the
 * effect was rolled back; the answer is the one stored by the request that took the key.
 */
export function answerTakenKey(err: KeyTaken, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const claimed = request.idempotency;
  if (claimed) claimed.answered = true;
  const replayed = claimed ? answerFromRow(err.row, claimed.hash, reply) : undefined;
  if (replayed) return replayed;
  throw new AppError('idempotency_key_in_use', 'Another request with this Idempotency-Key is still in progress. Retry once it has finished.', undefined, {
    'Retry-After': '1',
  });
}

/** The answer the route is about to send, as stored: the serialization of `data` in the success envelope. */
function recordOf(claimed: KeyedRequest, reply: FastifyReply, data: unknown): AnswerRecord {
  claimed.body = reply.serialize({ success: true, data }) as string;
  return { scope: claimed.scope, key: claimed.key, hash: claimed.hash, status: reply.statusCode, contentType: JSON_TYPE, body: claimed.body };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends `data` in the success envelope; when its answer was stored, as the very bytes stored
 * (one serialization, not two, on the hot logging path).
 */
export function sendData(request: FastifyRequest, reply: FastifyReply, data: unknown): FastifyReply {
  const claimed = request.idempotency;
  if (claimed?.answered && claimed.body !== undefined) return reply.type(JSON_TYPE).send(claimed.body);
  return reply.send({ success: true, data });
}

/**
 * What a service needs to store a keyed request's answer with its effect. Usually as a
 * StoredAnswer (db/tx.ts inTransaction: claim first, record last); a statement that writes
 * the effects of many requests at once (the logging batch) stores their answers' data itself.
 */
export interface KeyedAnswer<T> extends StoredAnswer<T> {
  /** The key, for a statement that stores the answer's data itself (state 'data'; the logging statement). */
  identity: KeyIdentity & { hash: string; ttlHours: number };
  /** Says the answer is stored, once its transaction committed. */
  stored(): void;
  /**
   * The answer to this request from the row its key holds: the data `rebuild` makes of a
   * 'data' answer stored for this very request (the header idempotent-replayed set, the
   * status as stored), or else throws KeyTaken (the stored bytes replayed, or 409).
   */
  replay(row: KeyRow | undefined, rebuild: (stored: string) => T): T;
  /**
   * The Idempotency-Key to send the payment processor for one of this request's calls
   * (`purpose` tells them apart): the same on every retry of the request, so the processor
   * answers a retry with what it did the first time instead of doing it again.
   */
  processorKey(purpose: string): string;
  /**
   * The id of a row this request creates, the same on every retry, so processor calls that
   * carry it (metadata) repeat exactly — the processor refuses a key reused with other
   * parameters. Hash-based (UUID version 8), not time-ordered like newId().
   */
  idFor(purpose: string): string;
}

const digestOf = (claimed: KeyedRequest, purpose: string) => crypto.createHash('sha256').update(`${claimed.scope}\n${claimed.key}\n${purpose}`).digest();

function uuidFrom(bytes: Buffer): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = (b[6]! & 0x0f) | 0x80; // version 8: custom
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * For a route whose effect is a transaction of ours: the key is claimed at the start of
 * that transaction and the answer stored at its end, so after a crash either both the effect
 * and its answer exist or neither. Undefined when the request carries no key. The route sets
 * its status code before calling the service; `data` is what it sends in the envelope.
 * `redact` takes out of the stored answer what must never be stored (a new secret): a replay
 * answers it redacted, and the route's OpenAPI says so.
 */
/** The `redact` of an answer carrying a link that works as a credential (a hosted page's URL): stored and replayed as null. */
export const withoutUrl = <T extends { url: string | null }>(data: T): T => ({ ...data, url: null });

export function answerInTransaction<T>(request: FastifyRequest, reply: FastifyReply, redact?: (data: T) => T): KeyedAnswer<T> | undefined {
  const claimed = request.idempotency;
  if (!claimed) return undefined;
  const { store } = claimed;
  const stored = () => {
    claimed.answered = true;
  };
  const answerOf = (data: T): AnswerRecord => {
    if (!redact) return recordOf(claimed, reply, data);
    // An answer that carries a secret is stored without it; the route sends its own, whole.
    const record = recordOf(claimed, reply, redact(data));
    claimed.body = undefined;
    return record;
  };
  return {
    claim: (trx) => store.claim(trx, claimed),
    async record(trx, data) {
      await store.record(trx, answerOf(data));
      stored();
    },
    identity: { scope: claimed.scope, key: claimed.key, hash: claimed.hash, ttlHours: store.ttlHours },
    stored,
    replay(row, rebuild) {
      if (row?.state !== 'data' || row.expired || row.response_body === null) throw new KeyTaken(row);
      if (row.request_hash !== claimed.hash) throw keyReused();
      stored();
      replayedAs(reply, row);
      return rebuild(row.response_body);
    },
    processorKey: (purpose) => `tribes-${purpose}-${digestOf(claimed, 'processor').toString('base64url')}`,
    idFor: (purpose) => uuidFrom(digestOf(claimed, `id:${purpose}`)),
  };
}

/**
 * Idempotency-Key on POST, Stripe's way: the answer to a key is stored for 24 h and
 * replayed byte for byte to a retry with the same body; another body under the key is 409.
 *
 * The answer commits in the same transaction as the effect (answerInTransaction, or the
 * logging batch), so no crash can leave an effect without its answer or an answer without
 * its effect. Nothing is written before: there is no claim to leave behind or take over. A
 * concurrent request with the same key waits for the first one's transaction inside its
 * own, then replays the stored answer. An answer with no effect (4xx) is stored after it is
 * sent; a 5xx stores nothing, so the retry executes. Requests that fail validation or
 * authentication never reach these hooks.
 */
/** Rounds of 5,000 expired keys one purge run may delete (see the return of registerIdempotency). */
const PURGE_ROUNDS = 200;

export function registerIdempotency(app: FastifyInstance, opts: IdempotencyOptions): { purgeExpired(): Promise<unknown> } {
  const store = createIdempotencyStore(opts.db, opts.ttlHours);

  // The lookups of keyed requests that arrive together share one read (src/db/combiner.ts).
  const lookups = createCombiner({ run: store.rowsOf, maxBatch: 64, maxInFlight: 2, onBatch: opts.onBatch?.('idempotency_lookup') });

  // Callback style: every request passes here and only keyed POSTs have anything to do.
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST' || request.headers['idempotency-key'] === undefined) return done();
    // A replayed answer has been sent: the route must not run, so the chain is not continued.
    claimKey(request, reply).then((replayed) => void (replayed || done()), done);
  });

  /** Claims the request's key; true when a stored answer was replayed instead. */
  async function claimKey(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw new AppError('validation_error', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters without spaces.', [
        { field: 'Idempotency-Key', message: 'is malformed' },
      ]);
    }
    const scope = scopeOf(request.principal);
    const hash = requestHash(request);
    request.idempotency = { scope, key, hash, store };
    if (request.routeOptions.config.idempotency === 'in-effect') return false;
    // A retry of an answered request replays without executing anything.
    const replayed = answerFromRow(await lookups.submit({ scope, key }), hash, reply);
    if (replayed) request.idempotency = undefined;
    return replayed !== undefined;
  }

  app.addHook('onSend', (request, reply, payload, done) => {
    const claimed = request.idempotency;
    if (!claimed || claimed.answered) return done(null, payload);
    claimed.answered = true;
    // 5xx: nothing is stored, the retry executes. A 2xx reaching here came from a route that
    // does not store its answer with its effect (none should): stored now, as before.
    if (reply.statusCode >= 500 || typeof payload !== 'string') return done(null, payload);
    const contentType = reply.getHeader('content-type');
    store.store(opts.db, [{ ...claimed, status: reply.statusCode, contentType: typeof contentType === 'string' ? contentType : null, body: payload }]).then(
      () => done(null, payload),
      (err: unknown) => {
        // The answer is sent anyway; a retry will execute again (an answer without an effect).
        request.log.warn({ err }, 'could not store the idempotent answer');
        done(null, payload);
      },
    );
  });
  // Expired keys go in the background (jobs/schedule.ts); without it the table would keep every key forever.
  // An expired day is one partition dropped; the default partition (days stored while no run
  // had made their partition) is emptied up to 1,000,000 rows a run (200 rounds of 5,000, each
  // its own short statement; it stops at the first round that finds fewer).
  return { purgeExpired: () => store.purgeExpired(PURGE_ROUNDS) };
}
