import { parse, protocol, type messages, type PGlite } from '@electric-sql/pglite';

/**
 * Makes an embedded PGlite database look like a node-postgres pool with exactly one
 * connection, so Kysely's own PostgresDialect (and its migration advisory lock) runs on
 * it unchanged.
 *
 * PGlite is a single in-process backend: if two requests interleaved statements, one
 * request's BEGIN would swallow the other's writes. So `connect()` hands the connection
 * to one caller at a time and queues the rest, exactly like a pool of size one.
 *
 * Every query with parameters runs as a named prepared statement (`PreparedStatements`):
 * PGlite's own `query()` parses, analyzes and plans its text on every call, which in
 * WebAssembly costs more than running it (the logging statement: ~9 ms of its ~11).
 */
export interface PgliteQueryResult {
  command: string;
  rowCount: number;
  rows: unknown[];
}

export interface PgliteClient {
  query(sql: string, params?: unknown[]): Promise<PgliteQueryResult>;
  release(): void;
}

export class PglitePool {
  private busy = false;
  private readonly waiters: Array<() => void> = [];
  private readonly statements: PreparedStatements;

  constructor(private readonly pglite: PGlite) {
    this.statements = new PreparedStatements(pglite);
  }

  async connect(): Promise<PgliteClient> {
    if (this.pglite.closed) throw Object.assign(new Error('embedded database is closed'), { code: '57P01' });
    if (this.busy) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.busy = true;
    let released = false;
    return {
      query: (sql, params) => this.run(sql, params ?? []),
      release: () => {
        if (released) return;
        released = true;
        const next = this.waiters.shift();
        if (next) next();
        else this.busy = false;
      },
    };
  }

  /** Like pg.Pool's totalCount, idleCount and waitingCount. */
  connections(): { total: number; idle: number; waiting: number } {
    return { total: 1, idle: this.busy ? 0 : 1, waiting: this.waiters.length };
  }

  private async run(sql: string, params: unknown[]): Promise<PgliteQueryResult> {
    if (params.length === 0) {
      // Parameterless text may hold several statements (migrations); `exec` runs them all.
      const results = await this.pglite.exec(sql);
      if (DDL.test(sql)) await this.statements.forgetAll();
      const last = results[results.length - 1];
      return { command: 'EXEC', rowCount: last?.affectedRows ?? 0, rows: last?.rows ?? [] };
    }
    const result = await this.statements.query(sql, params);
    // PGlite does not report the command tag; affectedRows is what Kysely needs from it.
    return { command: 'UPDATE', rowCount: result.affectedRows ?? 0, rows: result.rows };
  }

  async end(): Promise<void> {
    if (!this.pglite.closed) await this.pglite.close();
  }
}

/**
 * Text that may change a table's shape (migrations, tests' own tables; always parameterless,
 * as DDL cannot take parameters). Matching more than that only costs statements prepared again.
 */
const DDL = /\b(create|alter|drop|truncate)\b/i;

/** Statements kept prepared; the least recently used is closed past this many. */
const MAX_PREPARED = 128;

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];
type Statement = { name: string; paramTypes: number[] };

/**
 * Query texts prepared once per database, by the wire protocol's extended messages (what
 * PGlite's `query()` sends, with a named statement instead of the unnamed one): Parse and
 * Describe the first time, then one Bind, Describe, Execute and Sync per call, handed to
 * the backend as one buffer. Parameters are serialized, and rows parsed, by PGlite's own
 * type handlers, as its `query()` does.
 *
 * Kysely's texts are constant per query shape (the demo runs ~200); texts that
 * vary (an `in` list's length) are closed again least recently used first. A prepared
 * statement whose tables change shape under it (`select *` after an `alter table`) would
 * fail with "cached plan must not change result type", so DDL closes them all
 * (`forgetAll`); should one fail so anyway, it is closed and, outside a transaction, run
 * once more (inside one, the transaction has failed).
 */
class PreparedStatements {
  private readonly prepared = new Map<string, Statement>();
  private counter = 0;

  constructor(private readonly pglite: PGlite) {}

  query(text: string, params: unknown[]) {
    return this.pglite.runExclusive(async () => {
      try {
        return await this.execute(text, params);
      } catch (err) {
        if (!isStalePlan(err)) throw err;
        await this.close(text);
        if ((err as { transactionStatus?: string }).transactionStatus !== 'I') throw err;
        return this.execute(text, params);
      }
    });
  }

  private async execute(text: string, params: unknown[]) {
    const statement = await this.statement(text);
    const serializers = this.pglite.serializers;
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const serialize = serializers[statement.paramTypes[i]!];
      return serialize ? serialize(value) : String(value);
    });
    const messages = await this.send(
      protocol.serialize.bind({ statement: statement.name, values }),
      protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}),
      protocol.serialize.sync(),
    );
    // As PGlite's query() does after each statement (a no-op for a data directory on disk).
    await this.pglite.syncToFs();
    return parse.parseResults(messages, this.pglite.parsers)[0]!;
  }

  private async statement(text: string): Promise<Statement> {
    const known = this.prepared.get(text);
    if (known) {
      // Most recently used last: Map keeps insertion order.
      this.prepared.delete(text);
      this.prepared.set(text, known);
      return known;
    }
    if (this.prepared.size >= MAX_PREPARED) await this.close(this.prepared.keys().next().value!);
    const name = `tribes_${++this.counter}`;
    const messages = await this.send(protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: 'S', name }), protocol.serialize.sync());
    const statement = { name, paramTypes: parse.parseDescribeStatementResults(messages) };
    this.prepared.set(text, statement);
    return statement;
  }

  /** Closes every prepared statement (after DDL: see above). */
  async forgetAll(): Promise<void> {
    if (this.prepared.size === 0) return;
    this.prepared.clear();
    await this.pglite.exec('deallocate all');
  }

  private async close(text: string): Promise<void> {
    const statement = this.prepared.get(text);
    if (!statement) return;
    this.prepared.delete(text);
    await this.send(protocol.serialize.close({ type: 'S', name: statement.name }), protocol.serialize.sync());
  }

  /**
   * Hands the backend these messages (ending with Sync) in one buffer; throws the first error
   * it answered with, carrying the transaction status of its ReadyForQuery ('I' idle, 'T' in a
   * transaction, 'E' in a failed one).
   */
  private async send(...parts: Uint8Array[]): Promise<BackendMessage[]> {
    const buffer = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const part of parts) {
      buffer.set(part, offset);
      offset += part.length;
    }
    const answer = await this.pglite.execProtocolStream(buffer, { syncToFs: false, throwOnError: false });
    const error = answer.find((m) => m.name === 'error');
    if (error) {
      const ready = answer[answer.length - 1];
      throw Object.assign(error, { transactionStatus: ready?.name === 'readyForQuery' ? (ready as messages.ReadyForQueryMessage).status : undefined });
    }
    return answer;
  }
}

function isStalePlan(err: unknown): boolean {
  return (err as { code?: string }).code === '0A000' && /cached plan must not change result type/.test((err as Error).message ?? '');
}
