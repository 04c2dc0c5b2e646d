import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { checkScheduledOnce, checkWorkerRestart, startSecondWorker } from './check-jobs.js';
import { checkRateLimits } from './check-limits.js';
import { checkLoadThroughKill, checkReadYourWrites } from './check-load.js';
import { checkReplicaRestart } from './check-replica.js';
import type { CheckResult, Cluster, ProofContext } from './context.js';
import { startReceiver } from './receiver.js';
import { makeProofData } from './setup.js';

/**
 * `npm run cluster -- --proof`: the checks of docs/cluster.md, in an order where each leaves
 * the cluster whole for the next. (d) spans (a): a second worker runs beside the first while
 * the load of (a) makes outgoing events, and its effects are counted after. Each check prints
 * one PASS/FAIL line with its numbers (and, on FAIL, the first violations).
 */

const MEMBERS = 12;

function print(r: CheckResult): void {
  console.log(`${r.ok ? 'PASS' : 'FAIL'} ${r.name}: ${r.detail}`);
  if (!r.ok) for (const v of (r.violations ?? []).slice(0, 15)) console.log(`     - ${v.slice(0, 600)}`);
}

/** Runs a check; an exception is its failure, not the end of the proof. */
async function run(results: CheckResult[], name: string, check: () => Promise<CheckResult>): Promise<void> {
  const started = Date.now();
  let r: CheckResult;
  try {
    r = await check();
  } catch (err) {
    r = { name, ok: false, detail: `threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}` };
  }
  r.detail += ` [${((Date.now() - started) / 1000).toFixed(1)} s]`;
  print(r);
  results.push(r);
}

export async function runProof(cluster: Cluster): Promise<boolean> {
  const receiver = await startReceiver();
  const db = new pg.Client({ connectionString: cluster.env.primaryUrl });
  await db.connect();
  const results: CheckResult[] = [];
  try {
    const t0 = Date.now();
    const data = await makeProofData(cluster.lbUrl, cluster.env.simPort, cluster.env.adminToken, receiver.url, MEMBERS);
    console.log(`set-up: 1 creator, ${MEMBERS} paying members, a webhook endpoint (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
    const ctx: ProofContext = { cluster, data, receiver, db };

    await run(results, 'b. read your writes across nodes', () => checkReadYourWrites(ctx));
    const second = await startSecondWorker(ctx);
    await run(results, 'a. SIGKILL of an API node under mixed load', () => checkLoadThroughKill(ctx));
    await run(results, 'd. scheduled work once with two workers', () => checkScheduledOnce(ctx, second));
    await run(results, 'e. worker SIGKILLed, a new one catches up', () => checkWorkerRestart(ctx, second));
    await run(results, 'c. rate limits across nodes through Redis', () => checkRateLimits(ctx));
    await run(results, 'f. replica stopped and restarted under reads', () => checkReplicaRestart(ctx));
  } catch (err) {
    console.log(`FAIL set-up: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    await db.end().catch(() => {});
    await receiver.close();
  }
  const failed = results.filter((r) => !r.ok);
  const ok = failed.length === 0 && results.length === 6;
  console.log(`\n${results.length - failed.length}/6 checks passed`);
  // The temp directory goes at exit: what the processes logged at error level is shown here.
  if (!ok) {
    for (const p of [cluster.simulator, ...cluster.nodes, cluster.worker]) {
      const errors = p.unexpectedErrors(5);
      if (errors.length) console.log(`unexpected errors in ${p.logFile}:\n${errors.join('\n')}`);
    }
    const haproxyLog = fs.readFileSync(path.join(cluster.env.root, 'haproxy.log'), 'utf8').split('\n');
    const fivexx = haproxyLog.filter((l) => /\s5\d\d\s\d+\s/.test(l));
    if (fivexx.length) console.log(`HAProxy's 5xx (${fivexx.length}, the last 10):\n${fivexx.slice(-10).join('\n')}`);
  }
  return ok;
}
