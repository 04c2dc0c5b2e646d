import crypto from 'node:crypto';
import type pg from 'pg';
import { sql, type RawBuilder } from 'kysely';

/**
 * Server-side prepared statements for the hottest queries. A query whose text starts with
 * `/*prepare:<name>*\/` runs as a named statement on PostgreSQL: each connection parses
 * and plans it once, then only binds and executes. The name carries a digest of the text,
 * so two texts can never share one name (node-postgres refuses that) and a changed text
 * after a deploy is a new statement. Only constant texts may carry the marker — one
 * statement per distinct text stays allocated for the life of each connection — and they
 * name their columns (never `*`), so a migration adding a column while old connections
 * live cannot change a prepared statement's result type.
 * Other queries are untouched. PGlite ignores the marker: its pool prepares every query
 * with parameters (pglite-pool.ts), where planning costs more than on PostgreSQL.
 */
const MARKER = /^\/\*prepare:([a-z0-9_]+)\*\//;
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

/**
 * Page sizes whose first page `pageWindow` writes into a statement's text. A few only: each
 * distinct text stays prepared on every connection.
 */
const PLANNED_ONCE_LIMITS = new Set([1, 10, 20, 25, 50, 100]);

/**
 * The OFFSET and LIMIT of a prepared page statement. A prepared statement saves planning
 * only once PostgreSQL settles on its generic plan, and for a LIMIT or OFFSET it cannot see
 * (a parameter) the planner assumes a tenth of the rows are read: the member list's generic
 * plan was costed ~70× its custom one (9,288 against 135 at a million members), so every
 * execution was planned again at bind (~1 ms, as long as running it). The first page of a
 * common size is written as literals (`limit 50`) and keeps its generic plan; other pages
 * stay parameters and are planned per execution, as before.
 */
export function pageWindow(offset: number, limit: number): RawBuilder<unknown> {
  return plannedOnce(offset, limit) ? sql`limit ${sql.lit(limit)}` : sql`offset ${offset} limit ${limit}`;
}

/** Whether `pageWindow` writes this page's window into the text (a first page of a common size). */
export const plannedOnce = (offset: number, limit: number): boolean => offset === 0 && PLANNED_ONCE_LIMITS.has(limit);

/**
 * An array parameter of a prepared statement that the planner cannot look into. Given the array
 * itself, each execution's custom plan knows its length (one token, one community) and is costed
 * below the generic plan, which assumes ten elements, so PostgreSQL never settles on the generic
 * plan and plans the statement again at every bind: 0.08 ms for the member token lookup, 0.24 and
 * 0.4 ms for the feed's access and page statements, 0.38 ms for a batch of post views (about as
 * long as running them). Behind a scalar subquery (an init plan) both plans assume the same
 * length and the generic one is kept after five executions; an index still serves `= any(…)`.
 */
export function opaqueArray(values: readonly unknown[], type: 'uuid' | 'bytea' | 'date' | 'timestamptz' | 'text'): RawBuilder<unknown> {
  return sql`(select ${values}::${sql.raw(type)}[])::${sql.raw(type)}[]`;
}
