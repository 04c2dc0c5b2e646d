import type { PGlite } from '@electric-sql/pglite';

/**
 * Makes an embedded PGlite database look like a node-postgres pool with exactly one
 * connection, so Kysely's own PostgresDialect (and its migration advisory lock) runs on
 * it unchanged.
 *
 * PGlite is a single in-process backend: if two requests interleaved statements, one
 * request's BEGIN would swallow the other's writes. So `connect()` hands the connection
 * to one caller at a time and queues the rest, exactly like a pool of size one.
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

  constructor(private readonly pglite: PGlite) {}

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
      const last = results[results.length - 1];
      return { command: 'EXEC', rowCount: last?.affectedRows ?? 0, rows: last?.rows ?? [] };
    }
    const result = await this.pglite.query(sql, params);
    // PGlite does not report the command tag; affectedRows is what Kysely needs from it.
    return { command: 'UPDATE', rowCount: result.affectedRows ?? 0, rows: result.rows };
  }

  async end(): Promise<void> {
    if (!this.pglite.closed) await this.pglite.close();
  }
}
