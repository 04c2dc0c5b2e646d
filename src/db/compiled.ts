import { CompiledQuery, type Compilable, type RawBuilder } from 'kysely';
import { preparedName } from './prepared.js';
import type { Executor } from './tx.js';

/** Stands for the i-th argument while a query is built and compiled once. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * Runs SQL on a database's pool directly, taking and returning a connection (one query, no
 * transaction); `statement` names it as a prepared statement.
 */
export type DirectQuery = (sql: string, parameters: readonly unknown[], statement: string | undefined) => Promise<unknown[]>;

const directQueries = new WeakMap<object, DirectQuery>();

/**
 * Lets compiled queries on `db` itself (not inside a transaction, which keeps Kysely's path on
 * its one connection) skip Kysely's executor: its per-query connection provider, a chain of
 * promises, was ~15% of the memory a simple read allocates (issue #16). The SQL and the
 * parameters are Kysely's, compiled once; the pool is the same one Kysely uses.
 */
export function registerDirectQuery(db: object, run: DirectQuery): void {
  directQueries.set(db, run);
}

interface Template {
  sql: string;
  /** Its prepared statement's name (db/prepared.ts), worked out once rather than per call. */
  statement: string | undefined;
  /** A Slot where an argument goes, the compiled value otherwise. */
  parameters: readonly unknown[];
}

/**
 * Queries built with Kysely once and then only re-run with new arguments. Building a query
 * object tree and compiling it to SQL costs more JavaScript on every request than a simple read
 * costs PostgreSQL (issue #16: ~20% of the server's CPU on `GET /tiers/:id`); a query whose
 * shape never changes needs neither more than once. Each `shape` is built the first time it is
 * asked for, with stand-ins for its arguments, and its SQL and parameter order are kept.
 *
 * The contract: `build` must produce the same SQL whatever the arguments — it may not branch
 * on them, nor pass one where Kysely looks inside it (`in` lists, objects to `set`). Shapes
 * that differ (a list with or without a filter) are different `shape` names.
 *
 * With `prepare` (PostgreSQL): a named server-side statement (db/prepared.ts), parsed and
 * planned once per connection. Such queries must name their columns, never `*`.
 */
export function compiledQueries(name: string, opts: { prepare?: boolean } = {}) {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`compiledQueries: name ${name} must be lower-case letters and underscores`);
  const templates = new Map<string, Template>();
  return {
    async rows<A extends unknown[], O>(executor: Executor, shape: string, args: A, build: (...args: A) => Compilable<O> | RawBuilder<O>): Promise<O[]> {
      let template = templates.get(shape);
      if (!template) {
        if (!/^[a-z0-9_]+$/.test(shape)) throw new Error(`compiledQueries ${name}: shape ${shape} must be lower-case letters, digits and underscores`);
        // A query builder compiles by itself; a raw `sql` template takes the executor to compile with.
        const compiled = build(...(args.map((_, i) => new Slot(i)) as A)).compile(executor);
        const marker = opts.prepare ? `/*prepare:${name}_${shape}*/ ` : '';
        template = { sql: marker + compiled.sql, statement: preparedName(marker + compiled.sql), parameters: compiled.parameters };
        const used = new Set(template.parameters.flatMap((p) => (p instanceof Slot ? [p.index] : [])));
        if (used.size !== args.length) throw new Error(`compiledQueries ${name}/${shape}: every argument must be a parameter of the query`);
        templates.set(shape, template);
      }
      const parameters = template.parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
      const direct = directQueries.get(executor);
      if (direct) return (await direct(template.sql, parameters, template.statement)) as O[];
      return (await executor.executeQuery<O>(CompiledQuery.raw(template.sql, parameters))).rows;
    },
  };
}
