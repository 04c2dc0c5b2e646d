import type { Logger } from 'pino';
import type { LogFormat } from '../config.js';

/**
 * The address a person (or the simulator) can reach a server at: a wildcard listen address
 * is reached on loopback, and an IPv6 literal needs brackets in a URL.
 */
export function originOf(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

export interface StartupFacts {
  /** The API server's origin (originOf). */
  origin: string;
  /** The in-process processor simulator's URL; undefined with real Stripe. */
  simulatorUrl: string | undefined;
  /** The file the admin token was read from or generated into; undefined when ADMIN_TOKEN gave it. */
  adminTokenFile: string | undefined;
  /** Which database, e.g. "embedded PGlite in /srv/data/pglite (18 migrations applied)". */
  database?: string;
}

/** What a newcomer needs first, as one structured log line's fields. */
export function bannerFields(facts: StartupFacts) {
  return {
    api: `${facts.origin}/api/v1`,
    docs: `${facts.origin}/docs`,
    dashboard: `${facts.origin}/dashboard/`,
    ...(facts.simulatorUrl ? { processor_simulator: facts.simulatorUrl } : {}),
    // Where the token is, never the token itself.
    admin_token_source: facts.adminTokenFile ?? 'ADMIN_TOKEN',
  };
}

/** The same facts as plain lines for a terminal. */
export function bannerLines(facts: StartupFacts): string[] {
  const fields = bannerFields(facts);
  const rows: [string, string][] = [
    ['API', fields.api],
    ['API docs', fields.docs],
    ['Dashboard', `${fields.dashboard} (sign in with a link: npm run cli -- creators login-link --email ...)`],
    ...(fields.processor_simulator ? [['Processor simulator', `${fields.processor_simulator} (Stripe-compatible; hosted checkout pages, test helpers)`] as [string, string]] : []),
    ['Admin token', facts.adminTokenFile ? `in ${facts.adminTokenFile} (the CLI reads it from there)` : 'from ADMIN_TOKEN'],
    ...(facts.database ? [['Database', facts.database] as [string, string]] : []),
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return ['', 'Tribes is ready.', ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`), ''];
}

/**
 * Says where everything is once the API listens (before that, no address is certain: PORT=0
 * picks one). A terminal gets plain lines, a log collector one `tribes ready` line.
 */
export function announce(facts: StartupFacts, format: LogFormat, logger: Logger, out: { write(text: string): unknown } = process.stdout): void {
  if (format === 'pretty') out.write(`${bannerLines(facts).join('\n')}\n`);
  else logger.info(bannerFields(facts), 'tribes ready');
}
