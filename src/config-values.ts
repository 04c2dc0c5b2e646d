import net from 'node:net';

/**
 * The parsers of src/config.ts: each reads one variable (or a few that go together), checks
 * it and says what is wrong in a ConfigError a person can act on.
 */

/** Cross-origin browsers (src/http/cors.ts). */
export interface CorsConfig {
  /** `['*']` for any origin, or exact origins (`https://tribe.example`); empty turns CORS off. */
  origins: string[];
  /** Whether the creator API (`/api/v1/…` but discovery, member, admin and webhooks) is open too. */
  creatorApi: boolean;
}

export interface ProcessorConfig {
  /** `simulator`: the built-in Stripe-compatible server, started in-process. `stripe`: real Stripe. */
  kind: 'simulator' | 'stripe';
  secretKey: string;
  /** Webhook signing secret; generated into DATA_DIR when unset and running the simulator. */
  webhookSecret: string | undefined;
  simHost: string;
  simPort: number;
  /** The simulator in this process (default), or false: the one `npm run processor-sim` runs at simHost:simPort, shared by several nodes. */
  simInProcess: boolean;
}

export class ConfigError extends Error {}

export type LogFormat = 'json' | 'pretty';

export function logFormatFrom(env: NodeJS.ProcessEnv): LogFormat | undefined {
  const raw = (env.LOG_FORMAT ?? '').trim().toLowerCase();
  if (raw === '') return undefined;
  if (raw === 'json' || raw === 'pretty') return raw;
  throw new ConfigError(
    `LOG_FORMAT must be "json" (one JSON object per line, for log collectors) or "pretty" (human-readable), got "${env.LOG_FORMAT}". ` +
      'Leave it unset to get pretty logs on a terminal and JSON otherwise.',
  );
}

export function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** `true` or `false` (any case); unset or empty → `fallback`. */
export function flagFrom(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
  return raw === 'true';
}

export function processorFrom(env: NodeJS.ProcessEnv): ProcessorConfig {
  const kind = env.PROCESSOR || 'simulator';
  if (kind !== 'simulator' && kind !== 'stripe') throw new ConfigError(`PROCESSOR must be "simulator" or "stripe", got "${kind}"`);
  const secretKey = env.STRIPE_SECRET_KEY || (kind === 'simulator' ? 'sk_test_tribes_simulator' : '');
  if (kind === 'stripe' && !/^(sk|rk)_(test|live)_/.test(secretKey)) {
    throw new ConfigError('PROCESSOR=stripe needs STRIPE_SECRET_KEY (sk_live_… or sk_test_…)');
  }
  if (kind === 'stripe' && !env.STRIPE_WEBHOOK_SECRET) throw new ConfigError('PROCESSOR=stripe needs STRIPE_WEBHOOK_SECRET (whsec_…)');
  return {
    kind,
    secretKey,
    webhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
    simHost: env.PROCESSOR_SIM_HOST || '127.0.0.1',
    simPort: intFrom(env, 'PROCESSOR_SIM_PORT', 12111, 0, 65535),
    simInProcess: flagFrom(env, 'PROCESSOR_SIM_IN_PROCESS', true),
  };
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, a CIDR range (`10.0.0.0/8`, `fd00::/8`) or one of proxy-addr's names for address ranges. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = net.isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY: unset or `false` (clients connect directly), `true` (believe every proxy: only
 * when nothing but the proxy can reach the server), or a comma-separated list of the proxies'
 * addresses/CIDR ranges (the safe choice: a client cannot pose as one).
 */
export function trustProxyFrom(env: NodeJS.ProcessEnv): boolean | string[] {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(raw)) {
    // Fastify 5 ignores a hop count (it trusts nothing then): a count cannot tell the load
    // balancer from a client that connects directly and writes its own X-Forwarded-For.
    throw new ConfigError(
      `TRUST_PROXY does not take a number of hops ("${raw}"): Fastify ignores it, as a hop count cannot tell the load balancer from a client. ` +
        'List the load balancer addresses or CIDR ranges instead (e.g. 10.0.0.0/8), or true if nothing but the load balancer can reach the server.',
    );
  }
  const entries = raw.split(',').map((e) => e.trim());
  const wrong = entries.find((e) => !isProxyAddress(e));
  if (wrong !== undefined) {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, or a comma-separated list of the proxies' IP addresses or CIDR ranges ` +
        `(e.g. 10.0.0.0/8,fd00::/8); "${wrong}" in "${raw}" is none of these. Leave it unset when clients connect to the server directly.`,
    );
  }
  return entries;
}

/**
 * CORS_ORIGINS: `*`, or a comma-separated list of exact origins (scheme, host and port as a
 * browser sends them in `Origin`: no path, no trailing slash). CORS_CREATOR_API: `true` opens
 * the creator API to those origins as well as discovery and the member API.
 */
export function corsFrom(env: NodeJS.ProcessEnv): CorsConfig {
  const raw = (env.CORS_ORIGINS ?? '').trim();
  const origins = raw === '' ? [] : raw.split(',').map((o) => o.trim());
  for (const origin of origins) {
    if (origin === '*') continue;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(
        `CORS_ORIGINS must be * or a comma-separated list of origins as browsers send them (https://tribe.example, http://localhost:5173: scheme, host, optional port, no path or trailing slash); "${origin}" is not one.`,
      );
    }
  }
  if (origins.includes('*') && origins.length > 1) throw new ConfigError('CORS_ORIGINS is either * (any origin) or a list of origins, not both.');
  const creatorApi = (env.CORS_CREATOR_API ?? '').trim().toLowerCase();
  if (!['', 'true', 'false'].includes(creatorApi)) throw new ConfigError(`CORS_CREATOR_API must be true or false, got "${env.CORS_CREATOR_API}"`);
  return { origins, creatorApi: creatorApi === 'true' };
}

export function publicUrlFrom(env: NodeJS.ProcessEnv, port: number): string {
  const url = env.PUBLIC_URL || `http://127.0.0.1:${port}`;
  if (!/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(url)) throw new ConfigError(`PUBLIC_URL must be an http(s) URL without a query, got "${url}"`);
  return url.replace(/\/+$/, '');
}

export function currencyFrom(env: NodeJS.ProcessEnv): string {
  const currency = (env.CURRENCY || 'brl').toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw new ConfigError(`CURRENCY must be a three-letter ISO code, got "${env.CURRENCY}"`);
  return currency;
}

const VIDEO_BASE_MAX = 1800;

export function videoBaseFrom(env: NodeJS.ProcessEnv): string {
  const base = env.EXERCISE_VIDEO_BASE_URL || 'https://videos.tribes.app/exercises';
  if (!/^https?:\/\/[^\s]+$/.test(base)) throw new ConfigError(`EXERCISE_VIDEO_BASE_URL must be an http(s) URL, got "${base}"`);
  // A catalog video_url is this + '/' + a slug (at most 120), within the 2,000 the API documents.
  if (base.length > VIDEO_BASE_MAX) throw new ConfigError(`EXERCISE_VIDEO_BASE_URL must be at most ${VIDEO_BASE_MAX} characters, got ${base.length}`);
  return base.replace(/\/+$/, '');
}
