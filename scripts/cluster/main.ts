import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { choosePorts, cleanups, ensureHaproxy, redisServer, runCleanups, startHaproxy, startPrimary, startReplica, waitServersUp } from './infra.js';
import type { Cluster } from './context.js';
import { apiNode, newClusterSecrets, simulatorProcess, workerNode, type ClusterEnv } from './nodes.js';

/**
 * `npm run cluster [-- --nodes N] [-- --proof | --bench]`: Tribes as several nodes on one machine
 * (docs/cluster.md). A PostgreSQL primary and streaming replica, redis-server, the processor
 * simulator, N API nodes (JOBS=false), one worker and HAProxy in front, all private to this
 * run and removed at exit. Without --proof it runs until Ctrl-C; with it, proof.ts's checks run
 * through the balancer and the exit code says whether all of them held; --bench measures
 * throughput through it with 1, 2 and 3 API nodes (bench.ts).
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');


function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

type Mode = 'try' | 'proof' | 'bench';

async function startCluster(nodeCount: number, mode: Mode): Promise<Cluster> {
  ensureHaproxy();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-cluster-'));
  // The postgres user reads its directories under here (we may be root).
  fs.chmodSync(root, 0o755);
  // `--keep` leaves the logs and data directories for a look after the run.
  if (!process.argv.includes('--keep')) cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const [pgPort, replicaPort, redisPort, preferredLbPort, simPort, workerPort, sparePort, ...nodePorts] = await choosePorts([
    5441, 5442, 6391, 8440, 8450, 8451, 8452, ...Array.from({ length: nodeCount }, (_, i) => 8441 + i),
  ]);
  let last = Date.now();
  const step = (what: string) => {
    process.stdout.write(`  (${((Date.now() - last) / 1000).toFixed(1)} s) ${what} …\n`);
    last = Date.now();
  };

  step(`building dist/server.mjs`);
  if (spawnSync('npm', ['run', '--silent', 'build:server'], { cwd: repoRoot, stdio: 'inherit' }).status !== 0) throw new Error('npm run build:server failed');
  step(`PostgreSQL primary on ${pgPort}`);
  const primary = startPrimary(root, pgPort!);
  step(`streaming replica on ${replicaPort} (pg_basebackup -R)`);
  const replica = startReplica(root, primary, replicaPort!);
  step(`redis-server on ${redisPort}`);
  const redis = redisServer(root, redisPort!);
  await redis.start();
  step(`HAProxy`);
  const lbPort = await startHaproxy(root, preferredLbPort!, nodePorts);

  const secrets = newClusterSecrets();
  const env: ClusterEnv = {
    root,
    repoRoot,
    primaryUrl: primary.url('tribes'),
    replicaUrl: replica.url('tribes'),
    redisUrl: redis.url,
    simPort: simPort!,
    lbPort,
    ...secrets,
    // The proof's rate-limit check spends budgets of fresh creators, each burst within one
    // window even on a loaded machine (1,600 GETs took up to 21 s); the load check's creator
    // stays well below it (its reads are paced).
    // The bench measures throughput, not the limiter: out of its way.
    rateLimitMax: mode === 'proof' ? 1000 : mode === 'bench' ? 10_000_000 : 600,
    rateLimitWindowMs: 60_000,
    // The proof counts every job's effect within a minute or two, so its jobs run every few seconds.
    ...(mode === 'proof'
      ? {
          jobIntervals: {
            RECONCILE_INTERVAL_MS: '5000',
            CHALLENGE_RANKING_INTERVAL_MS: '2000',
            METRICS_HISTORY_INTERVAL_MS: '2000',
            METRICS_FOLD_INTERVAL_MS: '2000',
            IDEMPOTENCY_PURGE_INTERVAL_MS: '2000',
          },
        }
      : {}),
  };
  step(`processor simulator on ${simPort}`);
  const simulator = simulatorProcess(env);
  simulator.start();
  await simulator.waitReady();
  // The first node migrates the database; the others start once it is done.
  const nodes = nodePorts.map((port, i) => apiNode(env, `api${i + 1}`, port));
  step(`API node api1 on ${nodePorts[0]} (migrates the database)`);
  nodes[0]!.start();
  await nodes[0]!.waitReady();
  step(`${nodes.length - 1} more API node(s) and the worker`);
  const worker = workerNode(env, 'worker1', workerPort!);
  for (const n of [...nodes.slice(1), worker]) n.start();
  await Promise.all([...nodes.slice(1), worker].map((n) => n.waitReady()));
  await waitServersUp(root, nodes.length);
  step(`up (HAProxy on ${lbPort})`);
  return { env, primary, replica, redis, simulator, nodes, worker, sparePort: sparePort!, lbUrl: `http://127.0.0.1:${lbPort}` };
}

function printTable(c: Cluster): void {
  const rows: Array<[string, string, string]> = [
    ['HAProxy (the API)', c.lbUrl, `health checks GET /ready; config ${path.join(c.env.root, 'haproxy.cfg')}`],
    ...c.nodes.map((n, i): [string, string, string] => [`API node api${i + 1}`, n.url, `JOBS=false, pid ${n.pid}`]),
    ['worker', c.worker.url, `scheduled jobs; /health /ready /metrics only, pid ${c.worker.pid}`],
    ['processor simulator', `http://127.0.0.1:${c.env.simPort}`, 'one for all nodes'],
    ['PostgreSQL primary', c.env.primaryUrl, c.primary.dataDir],
    ['PostgreSQL replica', c.env.replicaUrl, `${c.replica.dataDir} (DATABASE_REPLICA_URL)`],
    ['Redis', c.env.redisUrl, 'rate-limit counters'],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  console.log('\nTribes cluster is up.\n');
  for (const [a, b, note] of rows) console.log(`  ${a.padEnd(w0)}  ${b.padEnd(w1)}  ${note}`);
  console.log(`\n  admin token  ${c.env.adminToken}`);
  console.log(`  logs         ${c.env.root}/*.log`);
  console.log(`\n  try: curl -s -H "authorization: Bearer ${c.env.adminToken}" -H 'content-type: application/json' \\`);
  console.log(`         -d '{"name":"Ana","email":"ana@example.com"}' ${c.lbUrl}/api/v1/admin/creators\n`);
}

async function main(): Promise<void> {
  const proof = process.argv.includes('--proof');
  const bench = process.argv.includes('--bench');
  const nodeCount = Number(argValue('--nodes') ?? (bench ? 3 : 2));
  if (!Number.isInteger(nodeCount) || nodeCount < (proof ? 2 : 1) || nodeCount > 8) throw new Error(`--nodes takes 1..8 (the proof needs 2 or more), got ${argValue('--nodes')}`);
  const started = Date.now();
  console.log(`Starting a Tribes cluster (${nodeCount} API nodes)${proof ? ' for the proof' : ''}:`);
  const cluster = await startCluster(nodeCount, proof ? 'proof' : bench ? 'bench' : 'try');
  printTable(cluster);
  if (bench) {
    const { runBench } = await import('./bench.js');
    await runBench(cluster);
    process.exitCode = 0;
    return;
  }
  if (!proof) {
    console.log('Ctrl-C stops everything and removes the temp directory.');
    await new Promise<void>(() => {});
  }
  const { runProof } = await import('./proof.js');
  const ok = await runProof(cluster);
  console.log(`\ncluster proof: ${ok ? 'all checks PASS' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s (logs were in ${cluster.env.root})`);
  process.exitCode = ok ? 0 : 1;
}

// Whatever ends the run (the end of the proof, Ctrl-C, an error) stops everything it started.
process.on('exit', runCleanups);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.log(`\n${signal}: stopping the cluster`);
    process.exit(130);
  });
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  })
  .finally(() => {
    // Open sockets (ioredis, pg pools) would keep the proof alive; exit runs the cleanups.
    if (process.argv.includes('--proof') || process.argv.includes('--bench') || process.exitCode) process.exit(process.exitCode ?? 0);
  });
