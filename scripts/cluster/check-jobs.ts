import { send, settle, type Op } from '../../test/crash/load.js';
import { sleep, type ServerProcess } from '../../test/crash/server.js';
import { workerNode } from './nodes.js';
import type { CheckResult, ProofContext } from './context.js';
import { spareMembers } from './context.js';
import { countJobEffects, prepareJobEffects } from './job-effects.js';
import { BENCH_PRESS_ID } from './setup.js';

/**
 * (d) two workers at once run every scheduled job, and each effect happens once: each
 * outgoing event is sent once (here), and the other jobs' effects are counted in
 * job-effects.ts; (e) with no worker, deliveries wait,
 * and a new worker sends them, once. Effects are counted, not log lines: what the receiver got
 * (by `webhook-id`, the event id) and the `webhook_attempts` rows (one per send).
 */

/** A second worker beside the first, for the time of (a) and (d). */
export async function startSecondWorker(ctx: ProofContext): Promise<ServerProcess> {
  const second = workerNode(ctx.cluster.env, 'worker2', ctx.cluster.sparePort);
  second.start();
  await second.waitReady();
  return second;
}

/** workout.logged events of the creator not yet delivered (succeeded) to the endpoint. */
async function undelivered(ctx: ProofContext, logIds?: string[]): Promise<number> {
  const { rows } = await ctx.db.query<{ n: string }>(
    `select count(*) as n from events e
      where e.creator_id = $1 and e.type = 'workout.logged' and ($3::text[] is null or e.data->>'log_id' = any($3::text[]))
        and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.endpoint_id = $2 and d.status = 'succeeded')`,
    [ctx.data.creator.id, ctx.data.endpointId, logIds ?? null],
  );
  return Number(rows[0]!.n);
}

async function waitDelivered(ctx: ProofContext, timeoutMs: number, logIds?: string[]): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let left = await undelivered(ctx, logIds);
  while (left > 0 && Date.now() < deadline) {
    await sleep(250);
    left = await undelivered(ctx, logIds);
  }
  return left;
}

interface Tally {
  events: number;
  received: number;
  missing: string[];
  /** Event ids received more than once, and whether their delivery took more than one attempt (a sender died mid-send). */
  twice: Array<{ eventId: string; times: number; attempts: number }>;
  multiAttempt: number;
  /** What the attempts before a delivery's last one saw (status or error), for a report. */
  earlier: string[];
}

/** What the receiver and the attempts table say about the events of these logs (or all the creator's). */
async function tally(ctx: ProofContext, logIds?: string[]): Promise<Tally> {
  const { rows } = await ctx.db.query<{ event_id: string; attempts: string }>(
    `select e.id::text as event_id, (select count(*) from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
                                       where d.event_id = e.id and d.endpoint_id = $2) as attempts
       from events e where e.creator_id = $1 and e.type = 'workout.logged' and ($3::text[] is null or e.data->>'log_id' = any($3::text[]))`,
    [ctx.data.creator.id, ctx.data.endpointId, logIds ?? null],
  );
  const counts = ctx.receiver.counts();
  const missing = rows.filter((r) => !counts.has(r.event_id)).map((r) => `event ${r.event_id} never received`);
  const twice = rows
    .filter((r) => (counts.get(r.event_id) ?? 0) > 1)
    .map((r) => ({ eventId: r.event_id, times: counts.get(r.event_id)!, attempts: Number(r.attempts) }));
  const earlier = await ctx.db.query<{ seen: string }>(
    `select coalesce(a.status_code::text, a.error, 'no answer') as seen from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      where d.endpoint_id = $1 and d.status = 'succeeded' and a.n < d.attempts`,
    [ctx.data.endpointId],
  );
  return {
    events: rows.length,
    received: rows.reduce((n, r) => n + (counts.get(r.event_id) ?? 0), 0),
    missing,
    twice,
    multiAttempt: rows.filter((r) => Number(r.attempts) > 1).length,
    earlier: earlier.rows.map((r) => r.seen.slice(0, 120)),
  };
}

export async function checkScheduledOnce(ctx: ProofContext, second: ServerProcess): Promise<CheckResult> {
  const loadEndedAt = new Date();
  const prepared = await prepareJobEffects(ctx);
  const left = await waitDelivered(ctx, 60_000);
  const jobs = await countJobEffects(ctx, prepared, loadEndedAt);
  // Logs of the community without their event: the event commits with the log, so none.
  const { rows } = await ctx.db.query<{ logs: string; without: string }>(
    `select count(*) as logs, count(*) filter (where not exists (
        select 1 from events e where e.type = 'workout.logged' and e.data->>'log_id' = w.id::text)) as without
       from workout_logs w where w.community_id = $1`,
    [ctx.data.communityId],
  );
  const t = await tally(ctx);
  const bothAlive = ctx.cluster.worker.alive && second.alive;
  const senders = ctx.receiver.bySender();
  const sentBy = (p: ServerProcess) => senders.get(p.pid ?? -1) ?? 0;
  const unknown = ctx.receiver.received.length - sentBy(ctx.cluster.worker) - sentBy(second);
  const violations = [
    ...(left > 0 ? [`${left} events not delivered within 60 s`] : []),
    ...(Number(rows[0]!.without) > 0 ? [`${rows[0]!.without} logs of the community have no workout.logged event`] : []),
    ...t.missing,
    // Both workers lived through this check: no sender died mid-send, so nothing may arrive twice.
    ...t.twice.map((d) => `event ${d.eventId} received ${d.times} times (${d.attempts} attempt rows)`),
    ...(bothAlive ? [] : ['a worker died during the check']),
    ...(senders.get(ctx.cluster.nodes[0]!.pid ?? -1) || senders.get(ctx.cluster.nodes[1]!.pid ?? -1) ? ['an API node (JOBS=false) sent events'] : []),
    ...jobs.violations,
  ];
  return {
    name: 'd. scheduled work once with two workers',
    ok: violations.length === 0,
    detail:
      `2 workers running; ${rows[0]!.logs} logs in the community, ${t.events} workout.logged events, ${t.received} deliveries received, ` +
      `${t.missing.length} missing, ${t.twice.length} received twice, ${t.multiAttempt} deliveries with > 1 webhook_attempts row` +
      `${t.earlier.length ? ` (what their earlier attempts saw: ${[...new Set(t.earlier)].join('; ')})` : ''}; ` +
      `sent by worker1 ${sentBy(ctx.cluster.worker)}, worker2 ${sentBy(second)}, sender not identified ${unknown}` +
      jobs.details.map((d) => `\n     ${d}`).join(''),
    violations,
  };
}

export async function checkWorkerRestart(ctx: ProofContext, second: ServerProcess): Promise<CheckResult> {
  const worker = ctx.cluster.worker;
  await second.kill();
  await worker.kill();
  // Logs made while no worker runs: their events are due, and nobody sends them.
  const member = spareMembers(ctx)[1]!;
  const ops: Op[] = Array.from({ length: 20 }, (_, i) => ({
    key: `no-worker-${ctx.data.runId}-${i}`,
    route: 'workout_log' as const,
    round: 0,
    roundLabel: 'no worker',
    path: '/api/v1/member/workout-logs',
    authorization: member.authorization,
    bodyText: JSON.stringify({
      community_id: ctx.data.communityId,
      performed_at: new Date(Date.now() - 3 * 3600_000 + i * 1000).toISOString(),
      sets: [{ exercise_id: BENCH_PRESS_ID, reps: 3, load_kg: 50 + i }],
    }),
    attempts: [],
    stuckIn: [],
  }));
  for (const op of ops) await send(ctx.cluster.lbUrl, op, 'load');
  await settle(ctx.cluster.lbUrl, ops, 'recovery', { deadlineMs: 10_000, concurrency: 4 });
  const logIds = ops.flatMap((op) => {
    const a = op.attempts.find((x) => x.status === 201);
    return a ? [(JSON.parse(a.body) as { data: { id: string } }).data.id] : [];
  });
  await sleep(2000);
  const sentWithoutWorker = (await tally(ctx, logIds)).received;
  worker.start();
  await worker.waitReady();
  const startedAt = Date.now();
  const left = await waitDelivered(ctx, 60_000, logIds);
  const catchUpMs = Date.now() - startedAt;
  const t = await tally(ctx, logIds);
  const atLeastOnce = t.twice.filter((d) => d.attempts > 1);
  const violations = [
    ...(logIds.length !== ops.length ? [`${ops.length - logIds.length} of ${ops.length} logs were not created`] : []),
    ...(t.events !== logIds.length ? [`${t.events} events for ${logIds.length} logs`] : []),
    ...(sentWithoutWorker > 0 ? [`${sentWithoutWorker} deliveries arrived while no worker ran (an API node sends events?)`] : []),
    ...(left > 0 ? [`${left} not delivered within 60 s of the new worker`] : []),
    ...t.missing,
    ...t.twice.filter((d) => d.attempts <= 1).map((d) => `event ${d.eventId} received ${d.times} times from a single attempt`),
  ];
  return {
    name: 'e. worker SIGKILLed, a new one catches up',
    ok: violations.length === 0,
    detail:
      `both workers SIGKILLed; ${logIds.length} logs written with no worker, ${sentWithoutWorker} delivered meanwhile; a new worker delivered ` +
      `${t.received - sentWithoutWorker} in ${(catchUpMs / 1000).toFixed(1)} s: ${t.missing.length} missing, ${t.twice.length - atLeastOnce.length} twice, ` +
      `${atLeastOnce.length} re-sent after a sender died mid-send (at least once)`,
    violations,
  };
}
