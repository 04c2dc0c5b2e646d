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
}

export async function startReceiver() {
  const received: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { log_id?: string } };
        received.push({ webhookId: String(req.headers['webhook-id']), type: payload.type, logId: payload.data.log_id });
      } catch {
        // not a delivery
      }
      res.writeHead(200).end('ok');
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
