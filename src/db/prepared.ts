import crypto from 'node:crypto';
import type pg from 'pg';

/**
 * Server-side prepared statements for the hottest queries. A query whose text starts with
 * `/*prepare:<name>*\/` runs as a named statement on PostgreSQL: each connection parses
 * and plans it once, then only binds and executes. The name carries a digest of the text,
 * so two texts can never share one name (node-postgres refuses that) and a changed text
 * after a deploy is a new statement. Only constant texts may carry the marker — one
 * statement per distinct text stays allocated for the life of each connection — and they
 * name their columns (never `*`), so a migration adding a column while old connections
 * live cannot change a prepared statement's result type.
 * Other queries, and PGlite (one in-process connection, no planning worth saving), are
 * untouched.
 */
const MARKER = /^\/\*prepare:([a-z_]+)\*\//;
// By marker, the texts seen with it and their names. Keyed by the short marker, not the
// text: a query's text is a fresh string each time, and hashing kilobytes per call adds up.
const known = new Map<string, Array<{ text: string; name: string }>>();

export function preparedName(text: string): string | undefined {
  if (!text.startsWith('/*prepare:')) return undefined;
  const marker = MARKER.exec(text)?.[1];
  if (!marker) return undefined;
  const texts = known.get(marker) ?? known.set(marker, []).get(marker)!;
  let entry = texts.find((t) => t.text === text);
  if (!entry) {
    entry = { text, name: `${marker}_${crypto.createHash('sha1').update(text).digest('hex').slice(0, 12)}` };
    texts.push(entry);
  }
  return entry.name;
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
