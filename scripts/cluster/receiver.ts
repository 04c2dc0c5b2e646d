import { execFile } from 'node:child_process';
import http from 'node:http';

/**
 * A creator's webhook receiver on 127.0.0.1 (loopback is allowed with the simulator), answering
 * 200 and keeping each delivery's `webhook-id` and log id. test/events-kit.ts has the same for
 * the tests, but it asserts with vitest's expect, which does not load outside vitest.
 */
export interface Delivery {
  webhookId: string;
  type: string;
  logId: string | undefined;
  /** The sending connection's port on 127.0.0.1: whose it is tells which worker sent it. */
  fromPort: number;
}

export async function startReceiver() {
  const received: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { log_id?: string } };
        received.push({ webhookId: String(req.headers['webhook-id']), type: payload.type, logId: payload.data.log_id, fromPort: req.socket.remotePort ?? 0 });
      } catch {
        // not a delivery
      }
      res.writeHead(200).end('ok');
    });
  });
  // Which process holds the other end of each connection (ss -p), asked once per connection:
  // the proof's evidence that both workers sent, not only one of them. Asked by both ends: a
  // source port alone can also be another process's connection elsewhere (to PostgreSQL, say),
  // which once made an API node look like a sender.
  const pidOfPort = new Map<number, number>();
  server.on('connection', (socket) => {
    const port = socket.remotePort;
    if (!port) return;
    execFile('ss', ['-Htnp', 'src', `127.0.0.1:${port}`, 'dst', `127.0.0.1:${socket.localPort}`], (err, stdout) => {
      const pid = err ? undefined : /pid=(\d+)/.exec(stdout)?.[1];
      if (pid) pidOfPort.set(port, Number(pid));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** How many times each webhook-id arrived. */
    counts(): Map<string, number> {
      const m = new Map<string, number>();
      for (const d of received) m.set(d.webhookId, (m.get(d.webhookId) ?? 0) + 1);
      return m;
    },
    /** Deliveries per sending process id (0: not known). */
    bySender(): Map<number, number> {
      const m = new Map<number, number>();
      for (const d of received) {
        const pid = pidOfPort.get(d.fromPort) ?? 0;
        m.set(pid, (m.get(pid) ?? 0) + 1);
      }
      return m;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
