import dns, { type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateAddress } from '../../http/public-address.js';

/**
 * One POST to an endpoint, with what the delivery log keeps: the status (none when no answer
 * came), the time it took and the answer's first KB. Redirects are not followed (a 3xx is a
 * failure, as at Stripe). The address is checked after DNS resolution, at every connection:
 * a public name that resolves to a private address (or is made to, later) is refused, so
 * endpoints cannot reach our own network. Loopback is allowed only with the simulator, where
 * tests and the demo run a receiver on 127.0.0.1.
 */
export const SEND_TIMEOUT_MS = 15_000;
const KEPT_BODY_BYTES = 1024;
/** An answer this large is cut off: the log keeps 1 KB, and reading more only costs us. */
const MAX_READ_BYTES = 64 * 1024;

export interface SendResult {
  statusCode: number | null;
  latencyMs: number;
  body: string | null;
  error: string | null;
  retryAfterSeconds: number | null;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string): Promise<SendResult>;
  close(): void;
}

const isLoopback = (address: string) => address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');

export class RefusedAddressError extends Error {}

export function createSender({ allowLoopback, timeoutMs = SEND_TIMEOUT_MS, maxSockets = 64 }: { allowLoopback: boolean; timeoutMs?: number; maxSockets?: number }): Sender {
  const refused = (address: string) => isPrivateAddress(address) && !(allowLoopback && isLoopback(address));
  const lookup: LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => refused(a.address));
      if (bad || list.length === 0) return callback(new RefusedAddressError(`${hostname} resolves to ${bad?.address ?? 'no address'}, a private address: refused`), '', 4);
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets, lookup } as http.AgentOptions),
    'https:': new https.Agent({ keepAlive: true, maxSockets, lookup } as https.AgentOptions),
  };

  function send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const done = (r: Omit<SendResult, 'latencyMs'>): SendResult => ({ ...r, latencyMs: Math.round(performance.now() - started) });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve(done({ statusCode: null, body: null, error: 'the URL no longer parses', retryAfterSeconds: null }));
    }
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && refused(literal)) return Promise.resolve(done({ statusCode: null, body: null, error: `${literal} is a private address: refused`, retryAfterSeconds: null }));
    const agent = agents[target.protocol as 'http:' | 'https:'];
    if (!agent) return Promise.resolve(done({ statusCode: null, body: null, error: `${target.protocol} is not http(s)`, retryAfterSeconds: null }));
    const client = target.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      const req = client.request(
        target,
        { method: 'POST', agent, timeout: timeoutMs, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Tribes-Webhooks/1' } },
        (res) => {
          const chunks: Buffer[] = [];
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            if (read < KEPT_BODY_BYTES) chunks.push(chunk);
            read += chunk.length;
            if (read > MAX_READ_BYTES) res.destroy();
          });
          const finish = () =>
            resolve(
              done({
                statusCode: res.statusCode ?? null,
                body: Buffer.concat(chunks).subarray(0, KEPT_BODY_BYTES).toString('utf8'),
                error: null,
                retryAfterSeconds: retryAfter(res.headers['retry-after']),
              }),
            );
          res.on('end', finish);
          res.on('close', finish);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
      req.on('error', (err) => resolve(done({ statusCode: null, body: null, error: err.message.slice(0, 500), retryAfterSeconds: null })));
      req.end(body);
    });
  }

  return {
    send,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

/** Retry-After as seconds (a number of seconds or an HTTP date), at most a day; null when absent or unreadable. */
export function retryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  const seconds = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : (Date.parse(raw) - nowMs) / 1000;
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  return Math.min(Math.ceil(seconds), 24 * 3600);
}
