import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePorts, sleep } from '../../test/crash/server.js';

/**
 * The cluster's infrastructure, each piece private to this run: a PostgreSQL primary and a
 * streaming replica in temp data directories, a redis-server and HAProxy, on ports of their own
 * (never the machine's 5432 or 6379: the proof stops and kills these). Everything started here
 * registers how to stop it in `cleanups`, which main.ts runs on exit, Ctrl-C or failure.
 */

const PG_BIN = '/usr/lib/postgresql/15/bin';
const isRoot = process.getuid?.() === 0;

/** Run last-in first-out at exit; each must be synchronous-safe (exit handlers cannot await). */
export const cleanups: Array<() => void> = [];

export function runCleanups(): void {
  while (cleanups.length > 0) {
    try {
      cleanups.pop()!();
    } catch {
      // keep tearing down the rest
    }
  }
}

async function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * The preferred ports when all are free (easy to remember when trying it by hand), else the
 * busy ones replaced by free ones, so a CI machine with something on 8440 still runs.
 */
export async function choosePorts(preferred: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const p of preferred) out.push((await isFree(p)) && !out.includes(p) ? p : (await freePorts(1))[0]!);
  return out;
}

/** postgres refuses to run as root: as root, PostgreSQL commands run as the `postgres` OS user. */
function pgCommand(bin: string, args: string[]): [string, string[]] {
  const exe = path.join(PG_BIN, bin);
  return isRoot ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args];
}

function pg(bin: string, args: string[], opts: { quiet?: boolean } = {}): void {
  const [cmd, argv] = pgCommand(bin, args);
  const res = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (res.status !== 0 && !opts.quiet) throw new Error(`${bin} ${args.join(' ')} failed (${res.status}):\n${res.stdout}${res.stderr}`);
}

/** A directory the postgres user owns (the data directories and their logs live in it). */
function pgDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (isRoot) execFileSync('chown', ['postgres:postgres', dir]);
  return dir;
}

export interface PgServer {
  port: number;
  dataDir: string;
  url: (db: string) => string;
  start(): void;
  /** `pg_ctl stop -m fast`: what the replica check does to the replica. */
  stop(mode?: 'fast' | 'immediate'): void;
  ready(): boolean;
}

function pgServer(dataDir: string, port: number): PgServer {
  const opts = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dataDir}`,
    '-c wal_level=replica',
    '-c max_wal_senders=5',
    // 2-4 nodes × their pools, the simulator and the proof's own clients.
    '-c max_connections=200',
    '-c hot_standby=on',
  ].join(' ');
  const server: PgServer = {
    port,
    dataDir,
    url: (db) => `postgres://postgres@127.0.0.1:${port}/${db}`,
    start: () => pg('pg_ctl', ['-D', dataDir, '-l', `${dataDir}.log`, '-w', '-t', '60', '-o', opts, 'start']),
    stop: (mode = 'fast') => pg('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop'], { quiet: true }),
    ready: () => spawnSync(path.join(PG_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q']).status === 0,
  };
  return server;
}

/** initdb + start the primary (trust on 127.0.0.1: a throw-away local cluster), and create `tribes`. */
export function startPrimary(root: string, port: number): PgServer {
  const dataDir = path.join(pgDir(path.join(root, 'pg')), 'primary');
  pg('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
  const primary = pgServer(dataDir, port);
  cleanups.push(() => primary.stop('immediate'));
  primary.start();
  const res = spawnSync(path.join(PG_BIN, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-qc', 'create database tribes'], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`create database tribes failed: ${res.stderr}`);
  return primary;
}

/** A streaming replica: pg_basebackup -R writes standby.signal and primary_conninfo. */
export function startReplica(root: string, primary: PgServer, port: number): PgServer {
  const dataDir = path.join(root, 'pg', 'replica');
  pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dataDir, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync']);
  const replica = pgServer(dataDir, port);
  cleanups.push(() => replica.stop('immediate'));
  replica.start();
  return replica;
}

/** A child process we own, killed at exit (SIGKILL: the proof does it on purpose anyway). */
function own(child: ChildProcess): ChildProcess {
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

async function waitPort(port: number, what: string, child: ChildProcess, logFile: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (await isFree(port)) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port} within ${timeoutMs} ms`);
    await sleep(50);
  }
}

export interface RedisServer {
  port: number;
  url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
}

/** redis-server without persistence: a restart starts with no counters, as after a real crash. */
export function redisServer(root: string, port: number): RedisServer {
  let child: ChildProcess | undefined;
  const logFile = path.join(root, 'redis.log');
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const log = fs.openSync(logFile, 'a');
      child = own(spawn('/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', root], { stdio: ['ignore', log, log] }));
      await waitPort(port, 'redis-server', child, logFile);
    },
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Installs Debian's haproxy when missing and we are root; otherwise says what to do. */
export function ensureHaproxy(): void {
  if (spawnSync('haproxy', ['-v']).status === 0) return;
  if (!isRoot) throw new Error('haproxy is not installed: run `sudo apt-get install -y haproxy` (Debian package), then npm run cluster again');
  console.log('installing haproxy (apt-get install -y -q haproxy) …');
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', 'haproxy'], { stdio: 'ignore' }).status === 0;
  if (!install()) {
    spawnSync('apt-get', ['update', '-q'], { stdio: 'ignore' });
    if (!install()) throw new Error('apt-get install haproxy failed');
  }
}

/**
 * HAProxy in front of the API nodes. Health: GET /ready every 500 ms, out after 2 failures
 * (requests it is serving then are not cut: they finish or fail on their own).
 * Retries (up to 3, each to another node: redispatch) when the connection fails, the node
 * closes without an answer (SIGKILL mid-request) or answers 503 — but only for requests that
 * can safely run twice: GET/HEAD, and POSTs with an Idempotency-Key (the server runs a key's
 * effect once, docs/api.md, Idempotency). A 503 HAProxy makes itself (no node up) gets Retry-After.
 */
export function haproxyConfig(port: number, nodePorts: number[], statsSocket: string): string {
  return [
    'global',
    '  maxconn 4096',
    // What the proof reads back (how many requests HAProxy retried and sent to another node);
    // the bench disables and enables servers through it.
    `  stats socket ${statsSocket} mode 600 level admin`,
    // One line per request into haproxy.log: a failing proof shows HAProxy's own 5xx with their termination flags.
    '  log stderr format raw local0 info',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout http-request 10s',
    '  retries 3',
    '  option redispatch 1',
    '  option forwardfor',
    '  retry-on conn-failure empty-response response-timeout 503',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend nodes',
    'backend nodes',
    '  balance roundrobin',
    // L7 retries need the request body at hand; bodies here are small JSON.
    '  option http-buffer-request',
    '  http-request disable-l7-retry if !{ method GET HEAD } !{ req.hdr(idempotency-key) -m found }',
    '  option httpchk GET /ready',
    '  http-check expect status 200',
    // A check waits up to 2.5 s (/ready gives the database 2 s): a node slow under load is not
    // a dead one, and marking it down would cut its requests. A killed node refuses at once.
    '  timeout check 2500ms',
    '  default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2',
    '  http-after-response set-header Retry-After 1 if { status 503 } !{ res.hdr(retry-after) -m found }',
    ...nodePorts.map((p, i) => `  server api${i + 1} 127.0.0.1:${p} check`),
    '',
  ].join('\n');
}

/**
 * Starts HAProxy before the nodes (it marks them up as their /ready answers), so the port
 * the nodes and the simulator are told is one it holds; when another process took the chosen
 * port meanwhile, it tries free ones. Returns the port it listens on.
 */
export async function startHaproxy(root: string, preferredPort: number, nodePorts: number[]): Promise<number> {
  const cfg = path.join(root, 'haproxy.cfg');
  const logFile = path.join(root, 'haproxy.log');
  let port = preferredPort;
  for (let attempt = 1; ; attempt++) {
    fs.writeFileSync(cfg, haproxyConfig(port, nodePorts, path.join(root, 'haproxy.sock')));
    const check = spawnSync('haproxy', ['-c', '-q', '-f', cfg], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy config rejected:\n${check.stdout}${check.stderr}`);
    const log = fs.openSync(logFile, 'a');
    const child = own(spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', log, log] }));
    try {
      await waitPort(port, 'haproxy', child, logFile);
      return port;
    } catch (err) {
      if (attempt >= 3 || !/Address already in use/.test(String(err))) throw err;
      port = (await freePorts(1))[0]!;
    }
  }
}

/** HAProxy's `show stat` (stats socket), one record per proxy/server row, CSV fields by name. */
async function showStat(root: string): Promise<Array<Record<string, string>>> {
  const csv = await new Promise<string>((resolve, reject) => {
    const sock = net.createConnection(path.join(root, 'haproxy.sock'));
    let out = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (out += d));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
    sock.write('show stat\n');
  });
  const [header, ...lines] = csv.trim().split('\n');
  const names = header!.replace(/^# /, '').split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [names[i] ?? String(i), v])));
}

/** The backend's counters: wretr (retries), wredis (redispatches), hrsp_5xx, … */
export async function haproxyStats(root: string): Promise<Record<string, number>> {
  const backend = (await showStat(root)).find((r) => r.pxname === 'nodes' && r.svname === 'BACKEND') ?? {};
  return Object.fromEntries(Object.entries(backend).flatMap(([k, v]) => (v !== '' && Number.isFinite(Number(v)) ? [[k, Number(v)]] : [])));
}

/** Waits until HAProxy's health checks have marked `n` API nodes UP. */
export async function waitServersUp(root: string, n: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const up = (await showStat(root)).filter((r) => r.pxname === 'nodes' && r.svname !== 'BACKEND' && r.status === 'UP').length;
    if (up >= n) return;
    if (Date.now() > deadline) throw new Error(`HAProxy marked ${up} of ${n} API nodes up within ${timeoutMs} ms`);
    await sleep(100);
  }
}
