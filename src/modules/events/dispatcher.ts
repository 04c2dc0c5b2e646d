import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import { recordEvents } from './outbox.js';
import type { Sender, SendResult } from './sender.js';
import { signatureHeader } from './signing.js';

/**
 * Sends what the outbox made due (DESIGN §1's background work, for outgoing events): each
 * round claims up to `batch` due deliveries (FOR UPDATE SKIP LOCKED, so nodes claim
 * different rows) by pushing their next attempt a lease ahead, sends them with at most
 * `concurrency` requests in flight on this node, then settles all of them in one
 * transaction. A node that dies mid-round leaves its claims to come due again when the
 * lease ends: delivery is at least once, and receivers dedupe by `webhook-id`.
 *
 * Retries follow Svix's schedule stretched to about three days (RETRY_DELAYS_S), each delay
 * ±10% of jitter so a receiver's outage does not come back as one wave; a `Retry-After` that
 * asks for longer is honoured (up to a day). A 410 answer disables the endpoint at once; an
 * endpoint with no success for 5 days is disabled too; both send `webhook_endpoint.disabled`
 * to the creator's other endpoints. A disabled endpoint's deliveries wait for it.
 */
export const RETRY_DELAYS_S = [5, 300, 1800, 7200, 18_000, 36_000, 36_000, 86_400, 86_400];
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;
export const FAILING_DISABLES_AFTER_MS = 5 * 24 * 3600_000;
/** Longer than a send may take (15 s) and its settling, so a live sender's claim never comes due again. */
const LEASE_S = 30;
/** Finished deliveries are settled together, this many at a time or this soon after finishing. */
const SETTLE_BATCH = 100;
const SETTLE_WITHIN_MS = 200;
/** While the node is busy, claims are made at most this often, each of busyRate × this much. */
const PACE_MS = 250;

export interface DispatcherOptions {
  db: Kysely<Database>;
  sender: Sender;
  now?: () => Date;
  batch?: number;
  concurrency?: number;
  random?: () => number;
  /**
   * True while the node's foreground is busy (HTTP requests in flight past a bound): then the
   * dispatcher gives way, sending at most `busyRate` deliveries a second, and catches up at
   * full concurrency once the node is quiet again. Delivery is late during a burst, never lost.
   */
  busy?: () => boolean;
  busyRate?: number;
}

export interface PumpOptions {
  stop?: () => boolean;
  claims?: number;
  creatorIds?: string[] | null;
}

interface Claimed {
  id: string;
  creator_id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  data: unknown;
  created_at: Date;
  attempts: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

interface Outcome {
  delivery: Claimed;
  /** When it was sent. */
  at: Date;
  result: SendResult;
  status: 'pending' | 'succeeded' | 'dead';
  nextAttemptAt: Date | null;
  gone: boolean;
}

/** The body every attempt of a delivery sends, byte for byte (the signature covers it). */
export const payloadOf = (type: string, createdAt: Date, data: unknown) => JSON.stringify({ type, timestamp: createdAt.toISOString(), data });

export function createDispatcher({ db, sender, now = () => new Date(), batch = 200, concurrency = 64, random = Math.random, busy = () => false, busyRate = 100 }: DispatcherOptions) {
  const pacedBatch = Math.max(1, Math.round((busyRate * PACE_MS) / 1000));
  const perEndpoint = Math.max(1, Math.floor(concurrency / 4));
  /**
   * Claims up to `limit` due deliveries, at most `perEndpoint` of one endpoint and none of the
   * endpoints in `full` (this node already has that many of theirs in flight): a receiver that
   * is slow or black-holed holds a few of the node's slots, never all of them.
   */
  async function claim(at: Date, limit: number, full: string[], creatorIds: string[] | null): Promise<Claimed[]> {
    const { rows } = await sql<Claimed>`with candidates as (
        select d.id, d.next_attempt_at, row_number() over (partition by d.endpoint_id order by d.next_attempt_at) as n
        from (select d.id, d.endpoint_id, d.next_attempt_at from webhook_deliveries d
              where d.status = 'pending' and d.next_attempt_at <= ${at} and not (d.endpoint_id = any(${full}::uuid[]))
                and (${creatorIds}::uuid[] is null or d.creator_id = any(${creatorIds}::uuid[]))
              order by d.next_attempt_at limit ${limit * 4}) d
      ), due as (
        select d.id from webhook_deliveries d join candidates c on c.id = d.id join webhook_endpoints w on w.id = d.endpoint_id
        where c.n <= ${perEndpoint} and d.status = 'pending' and d.next_attempt_at <= ${at} and w.enabled
        order by c.next_attempt_at limit ${limit}
        for update of d skip locked
      ), claimed as (
        update webhook_deliveries d set attempts = d.attempts + 1, next_attempt_at = ${at}::timestamptz + make_interval(secs => ${LEASE_S}), updated_at = ${at}
        from due where d.id = due.id
        returning d.id, d.creator_id, d.endpoint_id, d.event_id, d.attempts
      )
      select c.*, e.type, e.data, e.created_at, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at
      from claimed c join events e on e.id = c.event_id join webhook_endpoints w on w.id = c.endpoint_id`.execute(db);
    return rows;
  }

  async function deliver(d: Claimed, at: Date): Promise<Outcome> {
    let result: SendResult;
    try {
      result = await send(d, at);
    } catch (err) {
      // Never expected (the sender answers every failure as a result): counted as a failed attempt.
      result = { statusCode: null, latencyMs: 0, body: null, error: `could not send: ${String(err).slice(0, 200)}`, retryAfterSeconds: null };
    }
    return outcomeOf(d, at, result);
  }

  function send(d: Claimed, at: Date): Promise<SendResult> {
    const body = payloadOf(d.type, new Date(d.created_at), typeof d.data === 'string' ? JSON.parse(d.data) : d.data);
    const secrets = [d.secret, ...(d.previous_secret && d.previous_secret_expires_at && new Date(d.previous_secret_expires_at) > at ? [d.previous_secret] : [])];
    const timestamp = Math.floor(at.getTime() / 1000);
    return sender.send(d.url, { 'webhook-id': d.event_id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(secrets, d.event_id, timestamp, body) }, body);
  }

  function outcomeOf(d: Claimed, at: Date, result: SendResult): Outcome {
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    if (ok) return { delivery: d, at, result, status: 'succeeded', nextAttemptAt: null, gone };
    if (gone || d.attempts >= MAX_ATTEMPTS) return { delivery: d, at, result, status: 'dead', nextAttemptAt: null, gone };
    const scheduled = RETRY_DELAYS_S[d.attempts - 1]! * (0.9 + 0.2 * random());
    const delayS = Math.max(scheduled, result.retryAfterSeconds ?? 0);
    return { delivery: d, at, result, status: 'pending', nextAttemptAt: new Date(at.getTime() + delayS * 1000), gone };
  }

  async function settle(outcomes: Outcome[], at: Date): Promise<void> {
    const col = <T>(f: (o: Outcome) => T) => outcomes.map(f);
    await db.transaction().execute(async (trx) => {
      await sql`insert into webhook_attempts (delivery_id, n, attempted_at, status_code, latency_ms, response_body, error)
        select * from unnest(${col((o) => o.delivery.id)}::uuid[], ${col((o) => o.delivery.attempts)}::int[], ${col((o) => o.at)}::timestamptz[],
          ${col((o) => o.result.statusCode)}::int[], ${col((o) => o.result.latencyMs)}::int[], ${col((o) => o.result.body)}::text[], ${col((o) => o.result.error)}::text[])
        on conflict do nothing`.execute(trx);
      await sql`update webhook_deliveries d set status = o.status, next_attempt_at = o.next, last_attempt_at = o.at, last_status_code = o.code, updated_at = ${at}
        from unnest(${col((o) => o.delivery.id)}::uuid[], ${col((o) => o.status)}::text[], ${col((o) => o.nextAttemptAt)}::timestamptz[], ${col((o) => o.result.statusCode)}::int[], ${col((o) => o.at)}::timestamptz[]) as o(id, status, next, code, at)
        where d.id = o.id`.execute(trx);
      // Per endpoint: any success this round clears its failing streak; else the streak starts
      // (or goes on), and a 410 or 5 days of it disables the endpoint.
      const byEndpoint = new Map<string, { creatorId: string; ok: boolean; gone: boolean }>();
      for (const o of outcomes) {
        const e = byEndpoint.get(o.delivery.endpoint_id) ?? { creatorId: o.delivery.creator_id, ok: false, gone: false };
        e.ok ||= o.status === 'succeeded';
        e.gone ||= o.gone;
        byEndpoint.set(o.delivery.endpoint_id, e);
      }
      const ids = [...byEndpoint.keys()];
      const streaks = sql`unnest(${ids}::uuid[], ${ids.map((id) => byEndpoint.get(id)!.ok)}::boolean[], ${ids.map((id) => byEndpoint.get(id)!.gone)}::boolean[]) as s(id, ok, gone)`;
      const failingSince = new Date(at.getTime() - FAILING_DISABLES_AFTER_MS);
      const { rows: disabled } = await sql<{ id: string; creator_id: string; url: string; disabled_reason: 'gone' | 'failing'; failing_since: Date | null }>`
        update webhook_endpoints w set enabled = false, disabled_reason = case when s.gone then 'gone' else 'failing' end, updated_at = ${at}
        from ${streaks}
        where w.id = s.id and w.enabled and (s.gone or (not s.ok and w.failing_since <= ${failingSince}))
        returning w.id, w.creator_id, w.url, w.disabled_reason, w.failing_since`.execute(trx);
      await sql`update webhook_endpoints w set failing_since = case when s.ok then null else coalesce(w.failing_since, ${at}) end
        from ${streaks}
        where w.id = s.id and w.failing_since is distinct from (case when s.ok then null else coalesce(w.failing_since, ${at}) end)`.execute(trx);
      for (const e of disabled) {
        await recordEvents(trx, e.creator_id, [
          { type: 'webhook_endpoint.disabled', data: { endpoint_id: e.id, url: e.url, reason: e.disabled_reason, failing_since: e.failing_since ? new Date(e.failing_since).toISOString() : null } },
        ]);
      }
    });
  }

  /**
   * Sends until nothing is due (or `stop()`): claims whenever half the slots are free, so a
   * slow receiver never holds up the rest (no round waits for its slowest request), and
   * settles finished deliveries in batches, at the latest SETTLE_WITHIN_MS after they finish
   * (well inside the lease). `claims: 1` makes one claim only (tests step a clock with it);
   * `creatorIds` sends only those creators' deliveries (tests sharing one database; an
   * operator draining one creator).
   */
  async function pump({ stop = () => false, claims = Infinity, creatorIds = null }: PumpOptions = {}): Promise<number> {
    const inFlight = new Map<Promise<void>, string>();
    const perEndpointInFlight = new Map<string, number>();
    let finished: Outcome[] = [];
    let oldestFinished = 0;
    let sent = 0;
    let claimsLeft = claims;
    let dry = false;
    let lastClaimAt = 0;
    const flush = async () => {
      if (finished.length === 0) return;
      const outcomes = finished;
      finished = [];
      await settle(outcomes, now());
      // Settling can make events of its own (an endpoint disabled): look again.
      dry = false;
    };
    const start = (d: Claimed, at: Date) => {
      perEndpointInFlight.set(d.endpoint_id, (perEndpointInFlight.get(d.endpoint_id) ?? 0) + 1);
      const p: Promise<void> = deliver(d, at).then((o) => {
        if (finished.length === 0) oldestFinished = Date.now();
        finished.push(o);
        inFlight.delete(p);
        perEndpointInFlight.set(d.endpoint_id, perEndpointInFlight.get(d.endpoint_id)! - 1);
      });
      inFlight.set(p, d.endpoint_id);
    };
    for (;;) {
      const room = concurrency - inFlight.size;
      // A busy node claims a small batch every PACE_MS at most (and only once the last is sent).
      const paced = busy();
      const waitMs = paced ? lastClaimAt + PACE_MS - Date.now() : 0;
      if (!dry && claimsLeft > 0 && !stop() && (inFlight.size === 0 || (!paced && room >= concurrency / 2)) && waitMs <= 0) {
        const full = [...perEndpointInFlight].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
        const at = now();
        lastClaimAt = Date.now();
        const claimed = await claim(at, Math.min(paced ? pacedBatch : batch, room), full, creatorIds);
        claimsLeft--;
        for (const d of claimed) start(d, at);
        sent += claimed.length;
        // Nothing due but what this node holds: claim again only once those are done.
        dry = claimed.length === 0 && full.length === 0;
      }
      if (inFlight.size === 0) {
        if (finished.length > 0) {
          await flush();
          if (!stop() && claimsLeft > 0) continue;
        }
        if (dry || stop() || claimsLeft <= 0) return sent;
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
        continue;
      }
      await Promise.race([...inFlight.keys(), new Promise((resolve) => setTimeout(resolve, SETTLE_WITHIN_MS).unref())]);
      if (finished.length >= SETTLE_BATCH || (finished.length > 0 && Date.now() - oldestFinished >= SETTLE_WITHIN_MS)) await flush();
      if (inFlight.size === 0) dry = false;
    }
  }

  return { pump, runOnce: (opts: Omit<PumpOptions, 'claims'> = {}) => pump({ ...opts, claims: 1 }) };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
