import crypto from 'node:crypto';
import { ALL_COMMUNITIES } from '../../src/modules/metrics/counters.js';
import { sleep } from '../../test/crash/server.js';
import type { ProofContext } from './context.js';
import { loadMembers, spareMembers } from './context.js';
import { makeHistoryCreator, type HistoryCreator } from './history-creator.js';
import { call, created, until } from './setup.js';

/**
 * What each scheduled job does, counted in rows while two workers run (check (d)). Work is
 * put in each job's way first, the way it meets it in production (a lost webhook, a processor
 * outage, a challenge that ended, days without history, keys past their TTL); then the
 * effects are waited for and counted: each must have happened, and once.
 *
 * - reconciliation: a payment the mirror lost (no event will tell) is restored once;
 * - inbox retries: an `invoice.paid` that failed while the processor was down is retried to
 *   success, its payment restored once;
 * - challenge standings: a challenge that ended gets yesterday's ranks once and one
 *   `challenge.finished`, received once;
 * - metrics history: one row per scope and day, with the figures of those days;
 * - metrics fold: today's active count equals the live members active today;
 * - idempotency purge: keys past the TTL gone, the others kept.
 */

const HISTORY_DAYS = 3;

export interface Prepared {
  startedAt: Date;
  /** The payment deleted for reconciliation to find, and the one whose event the inbox retries. */
  lost: { reconcile: LostPayment; inbox: LostPayment & { eventId: string } };
  challengeId: string;
  participants: number;
  history: HistoryCreator;
  keys: { scope: string; expired: number; kept: number };
}

interface LostPayment {
  invoice: string;
  oldId: string;
}

async function paymentOf(ctx: ProofContext, memberId: string): Promise<LostPayment> {
  const { rows } = await ctx.db.query<{ id: string; invoice: string }>(
    `select p.id, p.processor_invoice_id as invoice from payments p join subscriptions s on s.id = p.subscription_id
      where p.creator_id = $1 and s.member_id = $2 order by p.paid_at limit 1`,
    [ctx.data.creator.id, memberId],
  );
  if (!rows[0]) throw new Error(`no payment for member ${memberId}`);
  return { invoice: rows[0].invoice, oldId: rows[0].id };
}

/** A lost webhook: the mirror's row goes (its trigger takes the money out of the revenue counters too). */
const forget = (ctx: ProofContext, p: LostPayment) => ctx.db.query('delete from payments where id = $1', [p.oldId]);

/** `invoice.paid` as the processor sends it, signed with the webhook secret, posted through the balancer. */
async function postInvoicePaid(ctx: ProofContext, invoice: string): Promise<string> {
  const id = `evt_cluster_${crypto.randomBytes(8).toString('hex')}`;
  const payload = JSON.stringify({
    id,
    object: 'event',
    type: 'invoice.paid',
    account: ctx.data.creator.account,
    api_version: '2025-08-27.basil',
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: invoice, object: 'invoice' } },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
  });
  const signature = ctx.data.stripe.webhooks.generateTestHeaderString({ payload, secret: ctx.cluster.env.webhookSecret });
  const res = await fetch(`${ctx.cluster.lbUrl}/api/v1/webhooks/processor`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
  });
  if (res.status !== 200) throw new Error(`posting invoice.paid: ${res.status} ${await res.text()}`);
  return id;
}

/**
 * Inbox retries: with the processor down, an `invoice.paid` is acknowledged and its first
 * attempt fails (the handler reads the invoice); the processor comes back and a worker's
 * retry (or reconciliation's drain) applies it.
 */
async function failInboxEvent(ctx: ProofContext, p: LostPayment): Promise<string> {
  await ctx.cluster.simulator.kill();
  try {
    const eventId = await postInvoicePaid(ctx, p.invoice);
    await until(
      'the first attempt of invoice.paid to fail',
      async () => (await ctx.db.query('select 1 from webhook_events where id = $1 and last_error is not null', [eventId])).rowCount === 1,
    );
    return eventId;
  } finally {
    ctx.cluster.simulator.start();
    await ctx.cluster.simulator.waitReady();
  }
}

/** A challenge of the creator's community that ran yesterday and has ended (moved back two days), with two participants. */
async function endedChallenge(ctx: ProofContext): Promise<{ id: string; participants: number }> {
  const auth = ctx.data.creator.authorization;
  const challenge = await created(ctx.cluster.lbUrl, '/api/v1/challenges', {
    auth,
    body: { community_id: ctx.data.communityId, name: `Cluster week ${ctx.data.runId}`, metric: 'workouts_count', duration_days: 1, starts_at: new Date(Date.now() + 60_000).toISOString() },
  });
  const joiners = spareMembers(ctx);
  for (const m of joiners) {
    const res = await call(ctx.cluster.lbUrl, 'POST', `/api/v1/member/challenges/${challenge.id}/join`, { auth: m.authorization, body: {} });
    if (res.status !== 200 && res.status !== 201) throw new Error(`joining the challenge: ${res.status} ${res.text}`);
  }
  // Time moved for this challenge only: its day ended, and yesterday was inside its window.
  await ctx.db.query(`update challenges set starts_at = starts_at - interval '2 days', ends_at = ends_at - interval '2 days' where id = $1`, [challenge.id]);
  // Joined before yesterday ended: ranked for it (a member who joins today has no rank for yesterday).
  await ctx.db.query(`update challenge_participants set joined_at = joined_at - interval '2 days' where challenge_id = $1`, [challenge.id]);
  return { id: challenge.id, participants: joiners.length };
}

/** Half the keys of one load member's scope aged past the TTL (24 h by default). */
async function ageKeys(ctx: ProofContext): Promise<Prepared['keys']> {
  const scope = `member:${loadMembers(ctx)[0]!.id}`;
  const { rows } = await ctx.db.query<{ n: string }>(`select count(*) as n from idempotency_keys where scope = $1`, [scope]);
  const total = Number(rows[0]!.n);
  if (total < 2) throw new Error(`${scope} holds ${total} Idempotency-Keys after the load: nothing for the purge to choose from`);
  const aged = await ctx.db.query(
    `update idempotency_keys set created_at = now() - interval '25 hours'
      where (scope, key) in (select scope, key from idempotency_keys where scope = $1 order by key limit $2)`,
    [scope, Math.floor(total / 2)],
  );
  return { scope, expired: aged.rowCount ?? 0, kept: total - (aged.rowCount ?? 0) };
}

export async function prepareJobEffects(ctx: ProofContext): Promise<Prepared> {
  const startedAt = new Date();
  const [reconcileMember, inboxMember] = spareMembers(ctx);
  const reconcile = await paymentOf(ctx, reconcileMember!.id);
  const inboxPayment = await paymentOf(ctx, inboxMember!.id);
  await forget(ctx, reconcile);
  await forget(ctx, inboxPayment);
  const eventId = await failInboxEvent(ctx, inboxPayment);
  const challenge = await endedChallenge(ctx);
  const history = await makeHistoryCreator(ctx, HISTORY_DAYS);
  const keys = await ageKeys(ctx);
  return { startedAt, lost: { reconcile, inbox: { ...inboxPayment, eventId } }, challengeId: challenge.id, participants: challenge.participants, history, keys };
}

interface Effect {
  job: string;
  /** Done: everything this job was given has a visible effect (waited for). */
  done(): Promise<boolean>;
  /** What was counted, and what is wrong with it. */
  count(): Promise<{ detail: string; violations: string[] }>;
}

const one = async (ctx: ProofContext, sql: string, params: unknown[]) => (await ctx.db.query(sql, params)).rows[0];

/** A lost payment's effect: its rows for the invoice, the payment.succeeded events of the new row, and how often the endpoint got them. */
async function restored(ctx: ProofContext, p: LostPayment) {
  const r = await one(
    ctx,
    `select count(*)::int as rows, min(id::text) as id,
            (select array_agg(e.id::text) from events e where e.creator_id = $2 and e.type = 'payment.succeeded'
               and e.data->>'payment_id' in (select id::text from payments where processor_invoice_id = $1)) as events
       from payments where processor_invoice_id = $1`,
    [p.invoice, ctx.data.creator.id],
  );
  const events: string[] = r.events ?? [];
  const counts = ctx.receiver.counts();
  return { rows: r.rows as number, events: events.length, received: events.reduce((n, id) => n + (counts.get(id) ?? 0), 0), isNew: r.id !== null && r.id !== p.oldId };
}

function paymentEffect(ctx: ProofContext, job: string, p: LostPayment, extra?: () => Promise<{ detail: string; violations: string[] }>): Effect {
  return {
    job,
    done: async () => (await restored(ctx, p)).received > 0 && (!extra || (await extra()).violations.length === 0),
    count: async () => {
      const r = await restored(ctx, p);
      const more = extra ? await extra() : { detail: '', violations: [] };
      return {
        detail: `payment of ${p.invoice} restored: ${r.rows} row, ${r.events} payment.succeeded, received ${r.received} time(s)${more.detail}`,
        violations: [
          ...(r.rows !== 1 || !r.isNew ? [`${job}: ${r.rows} payment rows for ${p.invoice} (want 1 new)`] : []),
          ...(r.events !== 1 || r.received !== 1 ? [`${job}: ${r.events} payment.succeeded events for the restored payment, received ${r.received} times`] : []),
          ...more.violations,
        ],
      };
    },
  };
}

function effects(ctx: ProofContext, p: Prepared, loadEndedAt: Date): Effect[] {
  const creator = ctx.data.creator.id;
  const inboxEvent = async () => {
    const e = await one(ctx, `select attempts, processed_at is not null as processed, last_error from webhook_events where id = $1`, [p.lost.inbox.eventId]);
    return {
      detail: `; its event processed after ${e.attempts} attempts`,
      violations: e.processed ? [] : [`inbox: event ${p.lost.inbox.eventId} not processed (${e.attempts} attempts, last error ${e.last_error})`],
    };
  };
  return [
    paymentEffect(ctx, 'reconciliation', p.lost.reconcile),
    paymentEffect(ctx, 'inbox retries', p.lost.inbox, inboxEvent),
    {
      job: 'challenge standings',
      done: async () => (await one(ctx, `select finished_event_at is not null as f from challenges where id = $1`, [p.challengeId])).f && ctx.receiver.received.some((d) => d.type === 'challenge.finished'),
      count: async () => {
        const r = await one(
          ctx,
          `select (select count(*)::int from challenge_day_ranks where challenge_id = $1 and day = (now() at time zone 'UTC')::date - 1) as ranks,
                  (select count(*)::int from challenge_day_ranks where challenge_id = $1) as all_ranks,
                  (select array_agg(id::text) from events where creator_id = $2 and type = 'challenge.finished' and data->>'challenge_id' = $1::text) as events`,
          [p.challengeId, creator],
        );
        const events: string[] = r.events ?? [];
        const counts = ctx.receiver.counts();
        const received = events.reduce((n, id) => n + (counts.get(id) ?? 0), 0);
        return {
          detail: `${r.ranks} ranks for yesterday (${p.participants} participants), ${events.length} challenge.finished, received ${received} time(s)`,
          violations: [
            ...(r.ranks !== p.participants || r.all_ranks !== p.participants ? [`standings: ${r.all_ranks} rank rows, ${r.ranks} for yesterday, for ${p.participants} participants`] : []),
            ...(events.length !== 1 ? [`standings: ${events.length} challenge.finished events`] : []),
            ...(received !== 1 ? [`standings: challenge.finished received ${received} times`] : []),
          ],
        };
      },
    },
    {
      job: 'metrics history',
      done: async () => (await p.history.rows()).length >= p.history.expectedRows,
      count: async () => {
        const rows = await p.history.rows();
        const keys = new Set(rows.map((r) => `${r.scope} ${r.day}`));
        const wrong = rows.filter((r) => r.active_subscribers !== p.history.members || r.mrr_cents !== p.history.mrrCents);
        return {
          detail: `${rows.length} rows for ${p.history.expectedRows} scope-days, ${keys.size} distinct`,
          violations: [
            ...(rows.length !== p.history.expectedRows || keys.size !== rows.length ? [`history: ${rows.length} rows, ${keys.size} distinct, want ${p.history.expectedRows}`] : []),
            ...wrong.map((r) => `history: ${r.scope} ${r.day} has ${r.active_subscribers} subscribers and ${r.mrr_cents} MRR, want ${p.history.members} and ${p.history.mrrCents}`),
          ],
        };
      },
    },
    {
      job: 'metrics fold',
      done: async () => (await one(ctx, `select activity_folded_at > $2 as f from metrics_scopes where creator_id = $1 and scope_id = $3`, [creator, loadEndedAt, ALL_COMMUNITIES]))?.f === true,
      count: async () => {
        const r = await one(
          ctx,
          `select (select coalesce(sum(active), 0)::int from metrics_days where creator_id = $1 and scope_id = $2 and day = (now() at time zone 'UTC')::date) as kept,
                  (select count(*)::int from metrics_members m join member_activity cm on cm.creator_id = m.creator_id and cm.member_id = m.member_id
                    where m.creator_id = $1 and m.scope_id = $2 and (m.trialing or m.home_tier_id is not null)
                      and (cm.last_active_at at time zone 'UTC')::date = (now() at time zone 'UTC')::date) as truth`,
          [creator, ALL_COMMUNITIES],
        );
        return {
          detail: `today's active count ${r.kept}, live members active today ${r.truth}`,
          violations: r.kept === r.truth ? [] : [`fold: today's active count is ${r.kept}, ${r.truth} live members were active today`],
        };
      },
    },
    {
      job: 'idempotency purge',
      done: async () => (await one(ctx, `select count(*)::int as n from idempotency_keys where scope = $1 and created_at < now() - interval '24 hours'`, [p.keys.scope])).n === 0,
      count: async () => {
        const r = await one(ctx, `select count(*)::int as n from idempotency_keys where scope = $1`, [p.keys.scope]);
        return {
          detail: `${p.keys.expired} keys past the TTL purged, ${r.n} of ${p.keys.kept} others kept`,
          violations: r.n === p.keys.kept ? [] : [`purge: ${r.n} keys left of the scope, want the ${p.keys.kept} within the TTL`],
        };
      },
    },
  ];
}

/** Waits (up to `timeoutMs`) for every job's effect, then counts each. */
export async function countJobEffects(ctx: ProofContext, p: Prepared, loadEndedAt: Date, timeoutMs = 90_000): Promise<{ details: string[]; violations: string[] }> {
  const all = effects(ctx, p, loadEndedAt);
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(all);
  while (pending.size > 0 && Date.now() < deadline) {
    for (const e of [...pending]) if (await e.done()) pending.delete(e);
    if (pending.size > 0) await sleep(500);
  }
  const details: string[] = [];
  const violations = [...pending].map((e) => `${e.job}: no effect within ${timeoutMs / 1000} s`);
  for (const e of all) {
    const c = await e.count();
    details.push(`${e.job}: ${c.detail}`);
    violations.push(...c.violations);
  }
  return { details, violations };
}
