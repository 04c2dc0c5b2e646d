import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuCounter } from '../../bench/cpu.js';
import { sleep } from '../../test/crash/server.js';
import type { Cluster } from './context.js';
import { startReceiver } from './receiver.js';
import { BACK_SQUAT_ID, BENCH_PRESS_ID, created, makeProofData } from './setup.js';

/**
 * `npm run cluster -- --bench`: throughput through HAProxy with 1, 2 and 3 API nodes (the
 * others disabled on HAProxy's admin socket), for a creator read (GET /members, 50 rows) and
 * workout logging (POST, 20 fresh members in turn, no community: no outgoing events), with
 * the CPU each tier spent per request: the API nodes, this database's PostgreSQL backends and
 * HAProxy (bench/cpu.ts). Everything shares one 2-core machine, so it measures where CPU goes
 * more than how far nodes scale.
 */

const DURATION_S = 8;
const CONNECTIONS = 16;

async function adminCommand(root: string, command: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const sock = net.createConnection(path.join(root, 'haproxy.sock'));
    sock.on('data', () => {});
    sock.on('end', resolve);
    sock.on('error', reject);
    sock.write(`${command}\n`);
  });
}

interface Row {
  nodes: number;
  scenario: string;
  perSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  cpu: { nodes: number; postgres: number; haproxy: number };
}

export async function runBench(cluster: Cluster): Promise<Row[]> {
  const receiver = await startReceiver();
  const data = await makeProofData(cluster.lbUrl, cluster.env.simPort, cluster.env.adminToken, receiver.url, 12);
  const root = cluster.env.root;
  const nodePids = () => new Set(cluster.nodes.map((n) => n.pid));
  const counters = () => ({
    nodes: cpuCounter((pid) => nodePids().has(pid)),
    // Backends of the cluster's database only ("postgres: <user> <db> <client>"), not the machine's own.
    postgres: cpuCounter((_, cmd) => cmd.startsWith('postgres: postgres tribes ')),
    haproxy: cpuCounter((_, cmd) => cmd.includes(path.join(root, 'haproxy.cfg'))),
  });
  const rows: Row[] = [];
  let n = 0;
  // Fresh members for each node count: a log's cost grows with its member's history (records
  // are judged against it), and the runs with more nodes come later.
  let members: Array<{ authorization: string }> = [];
  const freshMembers = async (tag: string) =>
    Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const signed = await created(cluster.lbUrl, '/api/v1/member/signup', {
          body: { name: `Bench Member ${i}`, email: `bench-${data.runId}-${tag}-m${i}@example.com`, password: `pw-${data.runId}-long-enough-${i}` },
        });
        return { authorization: `Bearer ${signed.token}` };
      }),
    );
  const scenarios = {
    'creator read (GET /members?limit=50)': {
      url: `${cluster.lbUrl}/api/v1/members?limit=50`,
      headers: { authorization: data.creator.authorization },
    },
    'workout log (POST)': {
      url: cluster.lbUrl,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/member/workout-logs',
          setupRequest: (req: Record<string, unknown>) => ({
            ...req,
            headers: { 'content-type': 'application/json', authorization: members[n++ % members.length]!.authorization, 'idempotency-key': crypto.randomUUID() },
            body: JSON.stringify({
              performed_at: new Date(Date.now() - 60_000).toISOString(),
              sets: [
                { exercise_id: BENCH_PRESS_ID, reps: 5, load_kg: 40 + (n % 40) },
                { exercise_id: BACK_SQUAT_ID, reps: 5, load_kg: 60 + (n % 40) },
              ],
            }),
          }),
        },
      ],
    },
  };
  for (let active = 1; active <= cluster.nodes.length; active++) {
    for (let i = 0; i < cluster.nodes.length; i++) {
      await adminCommand(root, `${i < active ? 'enable' : 'disable'} server nodes/api${i + 1}`);
    }
    members = await freshMembers(`n${active}`);
    await sleep(1000);
    for (const [scenario, opts] of Object.entries(scenarios)) {
      const cpu = counters();
      const result = await autocannon({ ...opts, connections: CONNECTIONS, duration: DURATION_S });
      const total = result.requests.total as number;
      const per = (c: () => number | undefined) => Math.round(((c() ?? 0) / Math.max(total, 1)) * 1000) / 1000;
      const row: Row = {
        nodes: active,
        scenario,
        perSecond: Math.round(total / DURATION_S),
        p50: result.latency.p50,
        p99: result.latency.p99,
        non2xx: result.non2xx,
        cpu: { nodes: per(cpu.nodes), postgres: per(cpu.postgres), haproxy: per(cpu.haproxy) },
      };
      rows.push(row);
      console.log(
        `${active} node(s)  ${scenario.padEnd(38)} ${String(row.perSecond).padStart(5)}/s  p50 ${row.p50} ms  p99 ${row.p99} ms  non-2xx ${row.non2xx}  ` +
          `CPU ms/request: nodes ${row.cpu.nodes}, PostgreSQL ${row.cpu.postgres}, HAProxy ${row.cpu.haproxy}`,
      );
    }
  }
  await receiver.close();
  return rows;
}
