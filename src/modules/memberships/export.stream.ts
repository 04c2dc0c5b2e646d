import { Readable } from 'node:stream';
import { csvHeader, csvRows } from './csv.js';
import type { DirectoryRow } from './directory.repo.js';
import type { MembersExport } from './export.service.js';

export interface CsvStreamOptions {
  /** How long the client may take nothing before `onIdle` (which should cut the connection). */
  idleTimeoutMs: number;
  onIdle: () => void;
}

/**
 * The export as CSV bytes, pulled: the next batch is read only when the client has taken
 * the previous one (the stream's `_read`, which the response calls as its buffers drain), so
 * a client that stops reading stops the export instead of filling memory. While a batch waits
 * for the client the idle clock runs; it stops while the database reads.
 *
 * Destroying the stream (Fastify does when the response closes: done, reset, or cut off)
 * closes the export, even if no byte was read yet: a generator's `finally` would not run then.
 */
export class CsvExportStream extends Readable {
  private idle: NodeJS.Timeout | undefined;
  private pending: string | undefined;

  constructor(
    private readonly source: MembersExport,
    first: DirectoryRow[] | undefined,
    private readonly opts: CsvStreamOptions,
  ) {
    super();
    this.pending = csvHeader() + (first ? csvRows(first) : '');
    this.waitForClient();
  }

  override _read(): void {
    clearTimeout(this.idle);
    if (this.pending !== undefined) {
      const chunk = this.pending;
      this.pending = undefined;
      this.push(chunk);
      this.waitForClient();
      return;
    }
    this.source.next().then(
      (rows) => {
        if (this.destroyed) return;
        if (!rows) {
          this.push(null);
          return;
        }
        this.push(csvRows(rows));
        this.waitForClient();
      },
      (err: unknown) => this.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.idle);
    this.source.close().then(() => callback(err));
  }

  /** Until the next `_read`, the client is what the export waits for. */
  private waitForClient(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (!this.destroyed) this.opts.onIdle();
    }, this.opts.idleTimeoutMs);
    this.idle.unref();
  }
}
