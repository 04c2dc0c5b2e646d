import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LOG_REDACT } from '../src/app.js';
import { gracefulShutdown } from '../src/http/shutdown.js';
import { buildTestApp, createCommunity, createCreator, createMember, json } from './helpers.js';

describe('logging', () => {
  it('tags every request line with the request id and never writes keys or tokens', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const t = await buildTestApp({ logger: { level: 'debug', redact: LOG_REDACT, stream } });
    try {
      const creator = await createCreator(t);
      await createCommunity(t, creator);
      await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: { ...creator.headers, 'x-request-id': 'trace-log-1' } });
      await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: { authorization: 'Bearer tribes_sk_leakedleakedleakedleakedleakedleaked' } });
      const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.req || l.res);
      expect(requestLines.length).toBeGreaterThan(4);
      for (const line of requestLines) expect(line.reqId).toBeTruthy();
      expect(requestLines.some((l) => l.reqId === 'trace-log-1')).toBe(true);
      const all = lines.join('\n');
      expect(all).not.toContain(creator.apiKey);
      expect(all).not.toContain(t.adminToken);
      expect(all).not.toContain('leakedleaked');
    } finally {
      await t.close();
    }
  });
});

describe('metrics', () => {
  it('exposes request counts and latency by route template and status in Prometheus format', async () => {
    const t = await buildTestApp();
    try {
      const creator = await createCreator(t);
      await t.app.inject({ method: 'GET', url: '/api/v1/communities/0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b', headers: creator.headers });
      const res = await t.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('text/plain');
      expect(res.body).toContain('http_requests_total{method="GET",route="/api/v1/communities/:id",status_code="404"} 1');
      expect(res.body).toMatch(/http_request_duration_seconds_bucket\{le="0.005",method="POST",route="\/api\/v1\/admin\/creators",status_code="201"\}/);
    } finally {
      await t.close();
    }
  });

  it('counts how many requests each group-committed statement served', async () => {
    const t = await buildTestApp();
    try {
      const members = await Promise.all([1, 2, 3].map(() => createMember(t)));
      const before = await t.app.inject({ method: 'GET', url: '/metrics' });
      const count = (body: string) => Number(/db_batch_size_sum\{statement="member_token"\} (\d+)/.exec(body)?.[1] ?? 0);
      await Promise.all(members.map((m) => t.app.inject({ method: 'GET', url: '/api/v1/member/me', headers: m.headers })));
      const after = await t.app.inject({ method: 'GET', url: '/metrics' });
      // Three lookups, in however many batches they were cut into.
      expect(count(after.body) - count(before.body)).toBe(3);
      expect(after.body).toMatch(/db_batch_size_bucket\{le="1",statement="member_token"\}/);
    } finally {
      await t.close();
    }
  });
});

describe('OpenAPI', () => {
  it('documents every route with tags, summary, description and its error responses', async () => {
    const t = await buildTestApp();
    try {
      const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.components.schemas).toHaveProperty('Error');
      let count = 0;
      for (const [route, item] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(item)) {
          count++;
          const where = `${method.toUpperCase()} ${route}`;
          expect(op.tags?.length, where).toBeGreaterThan(0);
          expect(op.summary, where).toBeTruthy();
          expect(op.description, where).toBeTruthy();
          const codes = Object.keys(op.responses);
          expect(codes.some((c) => c.startsWith('2')), where).toBe(true);
          if (!['/health'].includes(route)) expect(codes.some((c) => /^[45]/.test(c)), where).toBe(true);
        }
      }
      expect(count).toBeGreaterThanOrEqual(10);
    } finally {
      await t.close();
    }
  });

  it('serves the docs page with no asset from outside the server', async () => {
    const t = await buildTestApp();
    try {
      const page = await t.app.inject({ method: 'GET', url: '/docs/' });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('swagger');
      expect(page.body).not.toMatch(/(src|href)=["']https?:\/\//);
      const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
      expect(initializer.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('graceful shutdown', () => {
  it('lets an in-flight request finish, then refuses new connections and closes the database', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const t = await buildTestApp({
      beforeReady: (app) =>
        app.get('/api/v1/__slow', { config: { rateLimit: false } }, async () => {
          entered();
          await gate;
          return { success: true, data: { finished: true } };
        }),
    });
    let dbClosed = false;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as { port: number };
    const inFlight = fetch(`http://127.0.0.1:${port}/api/v1/__slow`);
    // In the handler, not merely sent: on a loaded machine 100 ms may not get it there.
    await inHandler;
    const stop = gracefulShutdown(t.app, async () => {
      dbClosed = true;
      await t.database.close();
    }, pino({ level: 'silent' }), 5000);
    const stopped = stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    expect(dbClosed).toBe(false);
    release();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, data: { finished: true } });
    expect(await stopped).toBe(true);
    expect(dbClosed).toBe(true);
  });

  it('starts as npm start and npm run start:prod run it (bundled, then plain node) on an empty data directory and exits 0 on SIGTERM', async () => {
    // npm start = the build script, then node on its output; start:prod = node on the output
    // alone. Built here the same way into a folder of this run's own (dist/ may be a
    // developer's), inside the project so its node_modules and migrations are found as they
    // are from dist/.
    const scripts = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe('npm run --silent build && node dist/server.mjs');
    expect(scripts['start:prod']).toBe('node dist/server.mjs');
    expect(scripts.build).toBe('npm run --silent build:server && npm run --silent build:dashboard');
    expect(scripts['build:server']).toContain(' --outfile=dist/server.mjs ');
    fs.mkdirSync('.tmp', { recursive: true });
    const outDir = fs.mkdtempSync(path.join('.tmp', 'start-test-'));
    const outfile = path.join(outDir, 'server.mjs');
    const args = scripts['build:server']!.split(' ').slice(1).map((a) => (a.startsWith('--outfile=') ? `--outfile=${outfile}` : a));
    const built = spawnSync(path.join('node_modules', '.bin', 'esbuild'), args, { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-start-'));
    const child = spawn(process.execPath, [outfile], {
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', PROCESSOR_SIM_PORT: '0', DATABASE_URL: '', ADMIN_TOKEN: '', STRIPE_WEBHOOK_SECRET: '', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    // Not a terminal, so JSON lines; the banner, logged once the API listens, says where everything is.
    const jsonLines = () => output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, string>);
    const banner = await new Promise<Record<string, string>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 40_000);
      child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
      child.stdout.on('data', () => {
        const ready = jsonLines().find((l) => l.msg === 'tribes ready');
        if (ready) {
          clearTimeout(timer);
          resolve(ready);
        }
      });
    });
    // The in-process simulator logs its own "listening" line, tagged with its component.
    const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(jsonLines().find((l) => l.msg?.startsWith('Server listening at') && !l.component)?.msg ?? '')?.[1];
    expect(banner).toMatchObject({ api: `${url}/api/v1`, docs: `${url}/docs`, admin_token_source: path.join(dataDir, 'admin-token') });
    expect((await fetch(`${url}/ready`)).status).toBe(200);
    expect((await fetch(`${banner.processor_simulator}/v1/test_helpers/clock`)).status).toBe(200);
    const token = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    expect(output).not.toContain(token);
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(output).toContain('shutdown complete');
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(outDir, { recursive: true, force: true });
  }, 60_000);
});
