import { Readable } from 'node:stream';
import { csvHeader, csvRows } from './csv.js';
import type { DirectoryRow } from './directory.repo.js';
import type { MembersExport } from './export.service.js';

export interface CsvStreamOptions {
  /** How long the client may take nothing before `onIdle` (which should cut the connection). */
  idleTimeoutMs: number;
  onIdle: () => void;
}

/** A batch is handed to the response in pieces this size, so the idle clock sees a slow client's progress. */
const PIECE_BYTES = 16 * 1024;

/**
 * The export as CSV bytes, pulled: the next batch is read only when the client has taken the
 * previous one (the stream's `_read`, which the response calls as its buffers drain), so a
 * client that stops reading stops the export instead of filling memory.
 *
 * The idle clock runs while the stream waits for the client and restarts whenever the response
 * takes a piece (16 KiB) of it; it stops while the database reads. A client that takes nothing
 * for `idleTimeoutMs` gets `onIdle`.
 *
 * Destroying the stream (Fastify does when the response closes: done, reset, or cut off)
 * closes the export, even if no byte was read yet: a generator's `finally` would not run then.
 */
export class CsvExportStream extends Readable {
  private idle: NodeJS.Timeout | undefined;
  private pending: string | undefined;
  private reading = false;

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
    if (this.pending !== undefined) {
      const text = this.pending;
      this.pending = undefined;
      this.pushInPieces(text);
      this.waitForClient();
      return;
    }
    this.reading = true;
    clearTimeout(this.idle);
    this.source.next().then(
      (rows) => {
        this.reading = false;
        if (this.destroyed) return;
        if (!rows) {
          this.push(null);
          return;
        }
        this.pushInPieces(csvRows(rows));
        this.waitForClient();
      },
      (err: unknown) => this.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  }

  /** The response took a piece: the client is reading, the clock starts again (not while the next batch is read). */
  override read(size?: number): unknown {
    const chunk: unknown = super.read(size);
    if (chunk !== null && !this.reading && !this.destroyed) this.waitForClient();
    return chunk;
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.idle);
    this.source.close().then(() => callback(err));
  }

  /** Cut as bytes (views of one buffer, no copy), never through a character's UTF-16 pair: the client reassembles bytes. */
  private pushInPieces(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    for (let at = 0; at < bytes.length; at += PIECE_BYTES) this.push(bytes.subarray(at, at + PIECE_BYTES));
  }

  private waitForClient(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (!this.destroyed) this.opts.onIdle();
    }, this.opts.idleTimeoutMs);
    this.idle.unref();
  }
}
