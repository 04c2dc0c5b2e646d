import { sleep } from './server.js';

/**
 * The crash suite's clients: keyed POSTs whose effects can be recognised afterwards, every
 * answer recorded, and the retries a careful client makes (same key, same body).
 */

export type Route = 'workout_log' | 'community' | 'refund' | 'payout';
export type Phase = 'load' | 'recovery' | 'resend' | 'sweep';

/** One HTTP attempt: status 0 means no answer (connection refused or reset, or timed out). */
export interface Answer {
  phase: Phase;
  status: number;
  body: string;
  /** The `code` of an error envelope, when the body is one. */
  code: string | null;
  replayed: boolean;
  retryAfter: string | null;
  error?: string;
  /** No answer because the body broke off after the status line (status 0 then too). */
  cutMidAnswer?: boolean;
}

/** One keyed request: what was sent, and every answer it got, in order. */
export interface Op {
  key: string;
  route: Route;
  round: number;
  /** A label for the round, e.g. "crash 2" or "database outage". */
  roundLabel: string;
  path: string;
  authorization: string;
  bodyText: string;
  attempts: Answer[];
  /** Phases in which the key stayed unanswered or in progress past the deadline. */
  stuckIn: Phase[];
  // What identifies the effect afterwards.
  memberId?: string;
  performedAtMs?: number;
  slug?: string;
  subscriptionIndex?: number;
  amountCents?: number;
}

/** A final answer is one the client stops on: 2xx or 4xx, except 409 idempotency_key_in_use and 429. */
export const isFinal = (a: Answer): boolean =>
  a.status >= 200 && a.status < 500 && !(a.status === 409 && a.code === 'idempotency_key_in_use') && a.status !== 429;

export const firstFinal = (op: Op): Answer | undefined => op.attempts.find(isFinal);
export const lastAnswer = (op: Op): Answer | undefined => op.attempts[op.attempts.length - 1];
export const settled = (op: Op): boolean => {
  const last = lastAnswer(op);
  return last !== undefined && isFinal(last);
};

const brief = (a: Answer): string =>
  a.status === 0 ? `no answer (${a.error ?? 'connection error'})` : `${a.status}${a.code ? ` ${a.code}` : ''}${a.replayed ? ' (replayed)' : ''}`;

/** "POST /api/v1/... key K (crash 2)": how failures name a request. */
export const describeOp = (op: Op): string => `${op.route} POST ${op.path} key ${op.key} [${op.roundLabel}] body ${op.bodyText}`;
/** Every attempt in order, repeats collapsed: "load:no answer (UND_ERR_SOCKET) → recovery:409 idempotency_key_in_use ×22". */
export const historyOf = (op: Op): string => {
  const runs: Array<{ text: string; n: number }> = [];
  for (const a of op.attempts) {
    const text = `${a.phase}:${brief(a)}`;
    const last = runs[runs.length - 1];
    if (last?.text === text) last.n++;
    else runs.push({ text, n: 1 });
  }
  return runs.map((r) => (r.n > 1 ? `${r.text} ×${r.n}` : r.text)).join(' → ');
};

const REQUEST_TIMEOUT_MS = 20_000;

/** Sends `op` once (same key, same body every time) and records the answer. */
export async function send(baseUrl: string, op: Op, phase: Phase): Promise<Answer> {
  let answer: Answer;
  let gotStatus = false;
  try {
    const res = await fetch(`${baseUrl}${op.path}`, {
      method: 'POST',
      headers: { authorization: op.authorization, 'content-type': 'application/json', 'idempotency-key': op.key },
      body: op.bodyText,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    gotStatus = true;
    const body = await res.text();
    let code: string | null = null;
    try {
      const parsed = JSON.parse(body) as { error?: { code?: unknown } };
      if (parsed && typeof parsed.error?.code === 'string') code = parsed.error.code;
    } catch {
      // not JSON
    }
    answer = {
      phase,
      status: res.status,
      body,
      code,
      replayed: res.headers.get('idempotent-replayed') === 'true',
      retryAfter: res.headers.get('retry-after'),
    };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const error = cause?.code ?? cause?.message ?? String(err);
    answer = { phase, status: 0, body: '', code: null, replayed: false, retryAfter: null, error, ...(gotStatus ? { cutMidAnswer: true } : {}) };
  }
  op.attempts.push(answer);
  return answer;
}

/** Runs `fn` over `items` with at most `concurrency` at once. */
export async function inParallel<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Sends each op again until its answer is final, in passes (every pending op once per pass,
 * then a short backoff), so one op stuck in progress never delays another's retries. Ops still
 * pending at the deadline are marked stuck in `phase`. `alwaysOnce` sends every op at least
 * once even if it is settled (the re-send check of answered keys).
 */
export async function settle(
  baseUrl: string,
  ops: readonly Op[],
  phase: Phase,
  opts: { deadlineMs: number; concurrency: number; alwaysOnce?: boolean },
): Promise<{ passes: number; stuck: Op[] }> {
  const deadline = Date.now() + opts.deadlineMs;
  let pending = opts.alwaysOnce ? [...ops] : ops.filter((op) => !settled(op));
  let passes = 0;
  let backoff = 100;
  while (pending.length > 0) {
    passes++;
    await inParallel(pending, opts.concurrency, async (op) => {
      await send(baseUrl, op, phase);
    });
    pending = pending.filter((op) => !settled(op));
    if (pending.length === 0 || Date.now() > deadline) break;
    await sleep(backoff + Math.floor(Math.random() * 50));
    backoff = Math.min(backoff * 2, 1000);
  }
  for (const op of pending) op.stuckIn.push(phase);
  return { passes, stuck: pending };
}

export interface LoadContext {
  runId: string;
  creatorAuthorization: string;
  members: Array<{ id: string; authorization: string }>;
  communityId: string;
  subscriptions: Array<{ id: string }>;
  /** Catalog exercises the logs use. */
  exerciseIds: readonly string[];
  /** performed_at of log n = base + n seconds (base is hours in the past, so every log is valid). */
  performedAtBaseMs: number;
}

/** Refund amounts are 101, 102, …; payout amounts 1001, 1002, … (unique, so each is recognisable). */
export const REFUND_CAP = 300;
export const PAYOUT_CAP = 300;
export const LOG_CAP = 20_000;

/**
 * The mixed stream: 7 in 10 requests log a workout, 1 in 10 creates a community, refunds part
 * of a payment or requests a manual payout. Every request has its own key and a body whose
 * effect is unique (performed_at, slug, amount), within budgets that keep every request valid.
 */
export class Workload {
  private n = 0;
  private logs = 0;
  private communities = 0;
  private refunds = 0;
  private payouts = 0;

  constructor(private readonly ctx: LoadContext) {}

  get exhausted(): boolean {
    return this.logs >= LOG_CAP;
  }

  next(round: number, roundLabel: string): Op {
    const i = this.n++;
    const slot = i % 10;
    const base = { round, roundLabel, attempts: [] as Answer[], stuckIn: [] as Phase[] };
    const keyOf = (route: string, n: number) => `crash-${this.ctx.runId}-${route}-${n}`;
    if (slot === 0) {
      const c = this.communities++;
      const slug = `crash-${this.ctx.runId}-c${c}`;
      return {
        ...base,
        key: keyOf('community', c),
        route: 'community',
        path: '/api/v1/communities',
        authorization: this.ctx.creatorAuthorization,
        bodyText: JSON.stringify({ name: `Crash community ${c}`, slug, category: 'crossfit' }),
        slug,
      };
    }
    if (slot === 1 && this.refunds < REFUND_CAP) {
      const r = this.refunds++;
      const subscriptionIndex = r % this.ctx.subscriptions.length;
      const amountCents = 101 + r;
      return {
        ...base,
        key: keyOf('refund', r),
        route: 'refund',
        path: `/api/v1/subscriptions/${this.ctx.subscriptions[subscriptionIndex]!.id}/refund`,
        authorization: this.ctx.creatorAuthorization,
        bodyText: JSON.stringify({ amount_cents: amountCents }),
        subscriptionIndex,
        amountCents,
      };
    }
    if (slot === 2 && this.payouts < PAYOUT_CAP) {
      const p = this.payouts++;
      const amountCents = 1001 + p;
      return {
        ...base,
        key: keyOf('payout', p),
        route: 'payout',
        path: '/api/v1/payouts/manual',
        authorization: this.ctx.creatorAuthorization,
        bodyText: JSON.stringify({ amount_cents: amountCents }),
        amountCents,
      };
    }
    const l = this.logs++;
    const member = this.ctx.members[l % this.ctx.members.length]!;
    const performedAtMs = this.ctx.performedAtBaseMs + l * 1000;
    const [first, second] = this.ctx.exerciseIds;
    const body = {
      ...(l % 2 === 0 ? { community_id: this.ctx.communityId } : {}),
      performed_at: new Date(performedAtMs).toISOString(),
      sets: [
        { exercise_id: first, reps: 3 + (l % 8), load_kg: 20 + (l % 80) },
        { exercise_id: second ?? first, reps: 5, load_kg: 30 + (l % 60) },
      ],
    };
    return {
      ...base,
      key: keyOf('log', l),
      route: 'workout_log',
      path: '/api/v1/member/workout-logs',
      authorization: member.authorization,
      bodyText: JSON.stringify(body),
      memberId: member.id,
      performedAtMs,
    };
  }
}

/**
 * `concurrency` clients sending fresh keyed requests until `stop()` says so. A client that got
 * no answer or a 5xx waits 100 ms before its next request, as a real client would back off.
 */
export async function runLoad(opts: {
  baseUrl: string;
  workload: Workload;
  round: number;
  roundLabel: string;
  concurrency: number;
  stop: () => boolean;
  ops: Op[];
}): Promise<void> {
  const client = async () => {
    while (!opts.stop() && !opts.workload.exhausted) {
      const op = opts.workload.next(opts.round, opts.roundLabel);
      opts.ops.push(op);
      const answer = await send(opts.baseUrl, op, 'load');
      if (answer.status === 0 || answer.status >= 500) await sleep(100);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, client));
}
