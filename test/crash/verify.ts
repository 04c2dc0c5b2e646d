import type pg from 'pg';
import type Stripe from 'stripe';
import { describeOp, firstFinal, historyOf, isFinal, lastAnswer, settled, type Op } from './load.js';

/**
 * What the crash suite asserts, as lists of violations (one line each, naming the key, the
 * route and what happened), so a failure lists every doubled or lost request at once.
 */

export interface Effects {
  /** `${member_id}|${performed_at ms}` → ids of the workout logs found. */
  logs: Map<string, string[]>;
  /** slug → ids of the communities found. */
  communities: Map<string, string[]>;
  /** The creator's refunds and payouts at the processor. */
  refunds: Array<{ id: string; amount: number; charge: string | null }>;
  payouts: Array<{ id: string; amount: number }>;
}

const push = <K, V>(map: Map<K, V[]>, key: K, value: V) => {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
};

export const logKey = (memberId: string, performedAtMs: number) => `${memberId}|${performedAtMs}`;

/** Reads every effect the load could have had: rows in the database, objects at the processor. */
export async function readEffects(opts: {
  db: pg.Client;
  stripe: Stripe;
  account: string;
  creatorId: string;
  memberIds: string[];
  /** The set-up community, not made by the load. */
  excludeCommunityIds: string[];
}): Promise<Effects> {
  const logs = new Map<string, string[]>();
  const logRows = await opts.db.query<{ id: string; member_id: string; performed_at: Date }>(
    'select id::text, member_id::text, performed_at from workout_logs where member_id = any($1::uuid[])',
    [opts.memberIds],
  );
  for (const r of logRows.rows) push(logs, logKey(r.member_id, r.performed_at.getTime()), r.id);
  const communities = new Map<string, string[]>();
  const communityRows = await opts.db.query<{ id: string; slug: string }>(
    'select id::text, slug from communities where creator_id = $1 and not (id = any($2::uuid[]))',
    [opts.creatorId, opts.excludeCommunityIds],
  );
  for (const r of communityRows.rows) push(communities, r.slug, r.id);
  const on = { stripeAccount: opts.account };
  const refunds = (await opts.stripe.refunds.list({ limit: 100 }, on).autoPagingToArray({ limit: 10_000 })).map((r) => ({
    id: r.id,
    amount: r.amount,
    charge: typeof r.charge === 'string' ? r.charge : (r.charge?.id ?? null),
  }));
  const payouts = (await opts.stripe.payouts.list({ limit: 100 }, on).autoPagingToArray({ limit: 10_000 })).map((p) => ({ id: p.id, amount: p.amount }));
  return { logs, communities, refunds, payouts };
}

const is2xx = (status: number) => status >= 200 && status < 300;

/** No 500 (nor any 5xx other than 502/503), and every 503 says when to retry. */
export function answerViolations(ops: readonly Op[]): string[] {
  const out: string[] = [];
  for (const op of ops) {
    for (const a of op.attempts) {
      if (a.status >= 500 && a.status !== 502 && a.status !== 503) {
        out.push(`${describeOp(op)}: answered ${a.status} in ${a.phase}: ${a.body.slice(0, 300)}`);
      }
      if (a.status === 503 && !a.retryAfter) out.push(`${describeOp(op)}: answered 503 without Retry-After in ${a.phase}: ${a.body.slice(0, 300)}`);
    }
  }
  return out;
}

/**
 * Every key ends with a final answer, and it is a 2xx: every request of the load is valid by
 * construction (budgets keep refunds and payouts within what remains), so a 4xx means the
 * key's earlier attempt ran (e.g. 409 slug_taken for its own community) or the server
 * refused a valid request. No key stays unanswered or in progress past the deadline.
 */
export function finalityViolations(ops: readonly Op[], deadlineSeconds: number): string[] {
  const out: string[] = [];
  for (const op of ops) {
    if (op.stuckIn.length > 0) {
      out.push(
        `${describeOp(op)}: still unanswered or in progress ${deadlineSeconds} s after the server was back (in ${op.stuckIn.join(', ')}; ${
          settled(op) ? 'settled later' : 'never settled'
        }): ${historyOf(op)}`,
      );
      continue;
    }
    const last = lastAnswer(op)!;
    if (!settled(op)) {
      out.push(`${describeOp(op)}: no final answer: ${historyOf(op)}`);
      continue;
    }
    const final = firstFinal(op)!;
    if (!is2xx(final.status)) {
      const hint =
        final.code === 'slug_taken' && op.route === 'community'
          ? " — its own slug: an earlier attempt's effect was executed and its answer lost"
          : '';
      out.push(`${describeOp(op)}: final answer ${final.status} ${final.code ?? ''} (expected 2xx)${hint}: ${historyOf(op)}; body ${final.body.slice(0, 300)}`);
    } else if (!is2xx(last.status) && isFinal(last)) {
      out.push(`${describeOp(op)}: answered ${final.status}, later ${last.status} ${last.code ?? ''}: ${historyOf(op)}`);
    }
  }
  return out;
}

/**
 * Once a key has a final answer, every later answer to it is that answer replayed:
 * `Idempotent-Replayed: true`, the same status and the same body byte for byte.
 */
export function replayViolations(ops: readonly Op[]): string[] {
  const out: string[] = [];
  for (const op of ops) {
    const index = op.attempts.findIndex(isFinal);
    if (index < 0) continue;
    const first = op.attempts[index]!;
    for (const a of op.attempts.slice(index + 1)) {
      if (!isFinal(a)) continue; // unanswered or in progress: finalityViolations names it
      const problems: string[] = [];
      if (!a.replayed) problems.push('no Idempotent-Replayed: true (executed again?)');
      if (a.status !== first.status) problems.push(`status ${a.status}, first ${first.status}`);
      if (a.body !== first.body) problems.push(`body differs: first ${first.body.slice(0, 200)} / now ${a.body.slice(0, 200)}`);
      if (problems.length) out.push(`${describeOp(op)}: ${a.phase} answer is not the first answer replayed: ${problems.join('; ')}`);
    }
  }
  return out;
}

/** The id the 2xx answer names for the effect (log id, community id, processor refund/payout id). */
function answerIdOf(op: Op, body: string): string | undefined {
  try {
    const data = (JSON.parse(body) as { data?: Record<string, unknown> }).data ?? {};
    const id = op.route === 'refund' ? data.processor_refund_id : op.route === 'payout' ? data.processor_payout_id : data.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every key answered 2xx has its effect exactly once, and it is the effect its answer names;
 * a key answered 4xx has none; a key never answered has at most one. Every effect found
 * belongs to some key (none came from nowhere).
 */
export function effectViolations(ops: readonly Op[], effects: Effects, chargeOfSubscription: readonly string[]): string[] {
  const out: string[] = [];
  const claimed = { logs: new Set<string>(), communities: new Set<string>(), refunds: new Set<number>(), payouts: new Set<number>() };
  for (const op of ops) {
    let found: string[];
    let where: string;
    if (op.route === 'workout_log') {
      const k = logKey(op.memberId!, op.performedAtMs!);
      claimed.logs.add(k);
      found = effects.logs.get(k) ?? [];
      where = `workout logs of member ${op.memberId} at ${new Date(op.performedAtMs!).toISOString()}`;
    } else if (op.route === 'community') {
      claimed.communities.add(op.slug!);
      found = effects.communities.get(op.slug!) ?? [];
      where = `communities with slug ${op.slug}`;
    } else if (op.route === 'refund') {
      claimed.refunds.add(op.amountCents!);
      const matching = effects.refunds.filter((r) => r.amount === op.amountCents);
      const charge = chargeOfSubscription[op.subscriptionIndex!];
      for (const r of matching) {
        if (r.charge !== charge) out.push(`${describeOp(op)}: processor refund ${r.id} of ${r.amount} is on charge ${r.charge}, not on the subscription's payment ${charge}`);
      }
      found = matching.map((r) => r.id);
      where = `processor refunds of ${op.amountCents} cents`;
    } else {
      claimed.payouts.add(op.amountCents!);
      found = effects.payouts.filter((p) => p.amount === op.amountCents).map((p) => p.id);
      where = `processor payouts of ${op.amountCents} cents`;
    }
    const final = firstFinal(op);
    if (final && is2xx(final.status)) {
      if (found.length !== 1) {
        out.push(
          `${describeOp(op)}: answered ${final.status} but ${found.length} ${where} exist (${found.length === 0 ? 'effect lost' : 'executed more than once'}): ${found.join(', ')}; ${historyOf(op)}`,
        );
      } else {
        const named = answerIdOf(op, final.body);
        if (named !== found[0]) out.push(`${describeOp(op)}: the answer names ${named}, but the effect found is ${found[0]}; ${historyOf(op)}`);
      }
    } else if (final) {
      if (found.length > 0) out.push(`${describeOp(op)}: answered ${final.status} ${final.code ?? ''} yet ${found.length} ${where} exist: ${found.join(', ')}; ${historyOf(op)}`);
    } else if (found.length > 1) {
      out.push(`${describeOp(op)}: never answered, yet executed ${found.length} times (${where}): ${found.join(', ')}; ${historyOf(op)}`);
    }
  }
  for (const [k, ids] of effects.logs) if (!claimed.logs.has(k)) out.push(`workout log(s) ${ids.join(', ')} (${k}) belong to no request of the load`);
  for (const [slug, ids] of effects.communities) if (!claimed.communities.has(slug)) out.push(`community ${ids.join(', ')} (${slug}) belongs to no request of the load`);
  for (const r of effects.refunds) if (!claimed.refunds.has(r.amount)) out.push(`processor refund ${r.id} of ${r.amount} belongs to no request of the load`);
  for (const p of effects.payouts) if (!claimed.payouts.has(p.amount)) out.push(`processor payout ${p.id} of ${p.amount} belongs to no request of the load`);
  return out;
}

/** A readable failure message: how many, and the first lines. */
export function report(title: string, violations: readonly string[], max = 40): string {
  const shown = violations.slice(0, max).map((v) => `  - ${v}`);
  const more = violations.length > max ? [`  … and ${violations.length - max} more`] : [];
  return [`${title}: ${violations.length} violation(s)`, ...shown, ...more].join('\n');
}
