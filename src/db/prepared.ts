import crypto from 'node:crypto';
import type pg from 'pg';

/**
 * Server-side prepared statements for the hottest queries. A query whose text starts with
 * `/*prepare:<name>*\/` runs as a named statement on PostgreSQL: each connection parses
 * and plans it once, then only binds and executes. The name carries a digest of the text,
 * so two texts can never share one name (node-postgres refuses that) and a changed text
 * after a deploy is a new statement. Only constant texts may carry the marker — one
 * statement per distinct text stays allocated for the life of each connection.
 * Other queries, and PGlite (one in-process connection, no planning worth saving), are
 * untouched.
 */
const MARKER = /^\/\*prepare:([a-z_]+)\*\//;
const names = new Map<string, string>();

export function preparedName(text: string): string | undefined {
  if (!text.startsWith('/*prepare:')) return undefined;
  let name = names.get(text);
  if (name === undefined) {
    const marker = MARKER.exec(text);
    if (!marker) return undefined;
    name = `${marker[1]}_${crypto.createHash('sha1').update(text).digest('hex').slice(0, 12)}`;
    names.set(text, name);
  }
  return name;
}

/** Makes a pool client run marked queries as named prepared statements (Kysely calls `query(text, values)`). */
export function preparingClient(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    const name = typeof text === 'string' && args.length === 2 ? preparedName(text) : undefined;
    return name ? query({ name, text, values }) : query(...args);
  };
}
