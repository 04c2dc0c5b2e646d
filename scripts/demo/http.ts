/**
 * The demo's HTTP clients: the Tribes API (answers in the `{success, data}` envelope) and the
 * processor simulator's test helpers (plain JSON). Only public, member, admin and test-helper
 * routes are called: the demo never writes a row behind the service's back.
 */

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface Client {
  get<T = any>(path: string): Promise<T>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<T>;
  patch<T = any>(path: string, body: unknown): Promise<T>;
  del<T = any>(path: string): Promise<T>;
  /** The whole answer (for lists: `data` and `pagination`). */
  raw<T = any>(method: string, path: string, body?: unknown): Promise<T>;
}

const MAX_RATE_LIMIT_WAIT_S = 90;

/** A client of `base` with a bearer `token`; a 429 is waited out (Retry-After) and retried. */
export function client(base: string, token?: string): Client {
  async function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(base + path, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).catch((err: unknown) => {
        // undici says only "fetch failed"; the cause (ECONNREFUSED, a reset) is what helps.
        const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
        throw new Error(`${method} ${base}${path} could not be sent${cause}`);
      });
      const text = await res.text();
      const json = text ? JSON.parse(text) : undefined;
      if (res.status === 429 && attempt < 5) {
        const wait = Math.min(Number(res.headers.get('retry-after') ?? 1), MAX_RATE_LIMIT_WAIT_S);
        await new Promise((r) => setTimeout(r, wait * 1000));
        continue;
      }
      if (!res.ok) {
        const error = json?.error ?? {};
        throw new HttpError(res.status, error.code, `${method} ${path} answered ${res.status} ${error.code ?? ''}: ${error.message ?? text}`);
      }
      return json;
    }
  }
  const data = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const json = await send(method, path, body, headers);
    return json && typeof json === 'object' && 'success' in json ? json.data : json;
  };
  return {
    get: (path) => data('GET', path),
    post: (path, body = {}, headers) => data('POST', path, body, headers),
    patch: (path, body) => data('PATCH', path, body),
    del: (path) => data('DELETE', path),
    raw: (method, path, body) => send(method, path, body),
  };
}

/** Polls `probe` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 20; ; delay = Math.min(delay * 2, 500)) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** Runs `fn` over `items`, at most `concurrency` at a time (results in input order). */
export async function inParallel<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
