import { spawnSync } from 'node:child_process';
import { inParallel } from '../../test/crash/load.js';
import { sleep } from '../../test/crash/server.js';
import type { CheckResult, ProofContext } from './context.js';
import { makeCreator } from './setup.js';

/**
 * (c) A creator's budget (RATE_LIMIT_MAX per window, counted per creator: src/http/rate-limit.ts)
 * is one budget across nodes when they share Redis: 1.6 budgets of requests spread over two
 * nodes get one budget of 2xx, not all. With Redis killed the nodes fail open (docs/operations.md, Scale-out: limits
 * are not enforced, requests are served); restarted, limiting holds again. Each phase spends a
 * fresh creator's budget, so no phase sees another's counter.
 */

interface Burst {
  ok: number;
  limited: number;
  other: string[];
  ms: number;
}

/** `n` GETs of one creator, alternating between the API nodes' own ports. */
async function burst(ctx: ProofContext, authorization: string, n: number): Promise<Burst> {
  const nodes = ctx.cluster.nodes.map((node) => node.url);
  const out: Burst = { ok: 0, limited: 0, other: [], ms: 0 };
  const started = Date.now();
  await inParallel(
    Array.from({ length: n }, (_, i) => i),
    16,
    async (i) => {
      try {
        const res = await fetch(`${nodes[i % nodes.length]}/api/v1/communities?limit=1`, { headers: { authorization }, signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (res.status === 200) out.ok++;
        else if (res.status === 429) out.limited++;
        else out.other.push(`request ${i}: ${res.status}`);
      } catch (err) {
        out.other.push(`request ${i}: no answer (${String((err as { cause?: unknown }).cause ?? err)})`);
      }
    },
  );
  out.ms = Date.now() - started;
  return out;
}

/**
 * Waits until every API node holds a connection to the restarted Redis (ioredis reconnects on
 * its own, with backoff), asking the kernel whose the connections are (ss -p); until then a
 * node still fails open, and its requests would count as a second budget.
 */
async function waitRedisClients(port: number, pids: number[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const out = spawnSync('ss', ['-Htnp', 'dst', `127.0.0.1:${port}`], { encoding: 'utf8' }).stdout ?? '';
    const connected = pids.filter((pid) => out.includes(`pid=${pid},`)).length;
    if (connected === pids.length || Date.now() > deadline) return connected;
    await sleep(100);
  }
}

export async function checkRateLimits(ctx: ProofContext): Promise<CheckResult> {
  const { lbUrl, env, redis, nodes } = ctx.cluster;
  const budget = env.rateLimitMax;
  const n = Math.round(budget * 1.6);
  // One budget, give or take the few requests racing the window's start.
  const oneBudget = (b: Burst) => b.ok >= budget * 0.98 && b.ok <= budget * 1.02 && b.other.length === 0;
  const violations: string[] = [];

  const before = await burst(ctx, (await makeCreator(lbUrl, env.simPort, env.adminToken, 'limit-a')).authorization, n);
  if (!oneBudget(before)) violations.push(`Redis up: ${before.ok} × 200 of ${n} (budget ${budget}), ${before.other.length} other`);

  // Made before Redis goes: the admin API is limited too, and fails open the same way.
  const during = (await makeCreator(lbUrl, env.simPort, env.adminToken, 'limit-b')).authorization;
  const after = (await makeCreator(lbUrl, env.simPort, env.adminToken, 'limit-c')).authorization;
  await redis.kill();
  const down = await burst(ctx, during, n);
  if (down.ok !== n) violations.push(`Redis down: ${down.ok} × 200 of ${n} (fail open serves all), ${down.limited} × 429, ${down.other.length} other: ${down.other.slice(0, 3).join('; ')}`);

  await redis.start();
  const clients = await waitRedisClients(redis.port, nodes.map((node) => node.pid!), 15_000);
  // Connected is not yet ready (ioredis sends its first commands): a moment more.
  await sleep(500);
  if (clients < nodes.length) violations.push(`only ${clients} of ${nodes.length} API nodes reconnected to Redis within 15 s`);
  const again = await burst(ctx, after, n);
  if (!oneBudget(again)) violations.push(`Redis back: ${again.ok} × 200 of ${n} (budget ${budget}), ${again.other.length} other`);
  const window = env.rateLimitWindowMs;
  if (before.ms > window || again.ms > window) violations.push(`a burst took longer than the ${window} ms window: the counts above span two windows`);

  return {
    name: 'c. rate limits across nodes through Redis',
    ok: violations.length === 0,
    detail:
      `budget ${budget} per ${window / 1000} s per creator, ${n} GETs alternating api1/api2 each phase: Redis up ${before.ok} × 200 / ${before.limited} × 429 (${before.ms} ms); ` +
      `Redis SIGKILLed ${down.ok} × 200 / ${down.limited} × 429 / ${down.other.length} other; Redis restarted (${clients} node connections) ${again.ok} × 200 / ${again.limited} × 429`,
    violations,
  };
}
