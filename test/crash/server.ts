import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import pg from 'pg';

/**
 * The crash suite's processes and database: the REAL server (`node --import tsx src/server.ts`)
 * as a child process that can be SIGKILLed and restarted on the same ports and database, and a
 * throw-away database on the test PostgreSQL server.
 */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `n` distinct free TCP ports on 127.0.0.1 (all held open together while they are chosen). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

export interface FreshDatabase {
  name: string;
  /** The fresh database's URL (for the server and for direct checks). */
  url: string;
  /** A URL of the same server, on another database, for administrative statements. */
  adminUrl: string;
  drop(): Promise<void>;
}

/**
 * A new, empty database on the server of `testUrl` (the URL global setup provides; its
 * `options=-c search_path=…` is dropped). The server migrates it at start-up.
 */
export async function createFreshDatabase(testUrl: string, name: string): Promise<FreshDatabase> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe database name ${name}`);
  const admin = new URL(testUrl);
  admin.searchParams.delete('options');
  const fresh = new URL(admin);
  fresh.pathname = `/${name}`;
  const adminUrl = admin.toString();
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  return {
    name,
    url: fresh.toString(),
    adminUrl,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

const OUTPUT_CAP = 200_000;

/** What the server logs at error level for every request while the database is down: expected, not news. */
const EXPECTED_ERRORS = new Set(['The database is unavailable; retry shortly.', 'simulator request failed']);
const CONNECTION_ERROR = /Connection terminated|terminating connection|ECONNRESET|ECONNREFUSED|not queryable|connection error/i;

/** The server as a child process: started, killed with SIGKILL, restarted with the same environment. */
export class ServerProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private output = '';
  private starts = 0;
  private readonly log: fs.WriteStream;
  /** Error-level lines other than the expected ones, whole (never trimmed away by the tail). */
  private readonly errors: string[] = [];

  /** `logFile` receives everything the server writes, across restarts. */
  constructor(
    private readonly opts: {
      cwd: string;
      env: Record<string, string>;
      port: number;
      logFile: string;
      /** What node runs (default: the TypeScript server through tsx); the cluster runs dist/server.mjs, --worker, or the simulator. */
      args?: string[];
      /** What answers 200 once it is up (default /ready). */
      readyPath?: string;
    },
  ) {
    this.log = fs.createWriteStream(opts.logFile, { flags: 'a' });
  }

  get logFile(): string {
    return this.opts.logFile;
  }

  get url(): string {
    return `http://127.0.0.1:${this.opts.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last `chars` characters the server(s) wrote to stdout and stderr, each start marked. */
  tail(chars = 30_000): string {
    return this.output.slice(-chars);
  }

  /**
   * Unexpected error-level lines (level >= 50, not caused by the database being down), at most
   * `max`; the errors behind 500s ("unhandled error") first.
   */
  unexpectedErrors(max = 20): string[] {
    const first = this.errors.filter((l) => l.includes('"msg":"unhandled error"'));
    return [...first, ...this.errors.filter((l) => !first.includes(l))].slice(0, max);
  }

  private pending = '';

  private record(text: string): void {
    this.log.write(text);
    this.output += text;
    if (this.output.length > OUTPUT_CAP) this.output = this.output.slice(-OUTPUT_CAP / 2);
    this.pending += text;
    const lines = this.pending.split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
        const expected = EXPECTED_ERRORS.has(entry.msg ?? '') || CONNECTION_ERROR.test(entry.err?.message ?? '');
        if ((entry.level ?? 0) >= 50 && !expected && this.errors.length < 500) this.errors.push(line.slice(0, 4000));
      } catch {
        // not a log line
      }
    }
  }

  /** Flushes the log file. */
  async closeLog(): Promise<void> {
    await new Promise<void>((resolve) => this.log.end(() => resolve()));
  }

  /**
   * Spawns node itself (no npm or tsx wrapper process), so `pid` is the server: a SIGKILL to
   * it kills the HTTP server, the in-process processor simulator and every database session.
   */
  start(): void {
    if (this.alive) throw new Error('the server is already running');
    const n = ++this.starts;
    this.record(`\n──── server start #${n} ────\n`);
    const child = spawn(process.execPath, this.opts.args ?? ['--import', 'tsx', 'src/server.ts'], {
      cwd: this.opts.cwd,
      env: this.opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.setEncoding('utf8').on('data', (d: string) => this.record(d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => this.record(d));
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.record(`──── server #${n} exited (code ${code}, signal ${signal}) ────\n`);
        resolve();
      });
    });
    this.child = child;
  }

  /** Waits for `GET /ready` = 200; throws (with the server's output) if it exits or takes too long. */
  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.alive) throw new Error(`the server exited before it was ready:\n${this.tail(8000)}`);
      try {
        const res = await fetch(`${this.url}${this.opts.readyPath ?? '/ready'}`, { signal: AbortSignal.timeout(3000) });
        await res.arrayBuffer();
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`the server was not ready within ${timeoutMs} ms:\n${this.tail(8000)}`);
      await sleep(100);
    }
  }

  /** SIGKILL to the server process itself; resolves once it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    process.kill(child.pid!, 'SIGKILL');
    await this.exited;
  }

  /** For process exit handlers: kill without waiting. */
  killSync(): void {
    if (this.child && this.alive) {
      try {
        process.kill(this.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
