import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freePort, readme, shellBlocks, walkthroughScript } from './readme-shell.js';

describe('the README', () => {
  it('has shell blocks that all parse, and a walkthrough that starts the server, runs the demo and follows a member', () => {
    const blocks = shellBlocks(readme());
    for (const block of blocks) {
      const parsed = spawnSync('bash', ['-n'], { input: block.code, encoding: 'utf8' });
      expect(parsed.status, `README line ${block.line}: ${parsed.stderr}`).toBe(0);
    }
    const runnable = blocks.filter((b) => b.runnable);
    expect(runnable.some((b) => /^npm start\b/m.test(b.code))).toBe(true);
    expect(runnable.some((b) => /npm run (--silent )?demo/.test(b.code))).toBe(true);
  });

  // On the embedded database by default; with TEST_DATABASE_URL, the server runs on a database of
  // its own on that PostgreSQL server (the server migrates `public`, so not the suite's schemas).
  // How long the demo takes is measured, not asserted (the README quotes it; a timed test would flake).
  it(
    'runs every runnable shell block against a started server, and the second demo leaves the first creator as it was',
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-readme-'));
      const database = await ownDatabase();
      const [port, simPort] = [await freePort(), await freePort()];
      // The first demo's creator, by the key its summary prints: its figures right after it, and
      // again after the second demo (`--env`) and the whole tour, which act as another creator.
      const metrics = (file: string) => `curl -s localhost:${port}/api/v1/creator-metrics -H "Authorization: Bearer $FIRST_KEY" > "$DATA_DIR/${file}"`;
      const afterFirstDemo = [`FIRST_KEY=$(grep -o 'tribes_sk_[A-Za-z0-9]*' "$DATA_DIR/first-demo.txt" | head -1)`, metrics('first-before.json')].join('\n');
      const after = [metrics('first-after.json'), 'echo "FIRST_KEY=$FIRST_KEY"', 'echo "SECOND_KEY=$TRIBES_KEY"'].join('\n');
      const script = walkthroughScript(shellBlocks(readme()), { port, simPort, afterFirstDemo, after });
      expect(script).toContain('first-demo.txt');
      try {
        const run = spawnSync('bash', ['-c', script], {
          encoding: 'utf8',
          // Two demos and a build: minutes on a loaded 2-core machine (CI runs test files two at a time).
          timeout: 900_000,
          env: {
            ...process.env,
            PORT: String(port),
            PROCESSOR_SIM_PORT: String(simPort),
            DATA_DIR: dataDir,
            TRIBES_URL: `http://127.0.0.1:${port}`,
            PROCESSOR_SIM_URL: `http://127.0.0.1:${simPort}`,
            LOG_FORMAT: 'json',
            DATABASE_URL: database?.url ?? '',
            ADMIN_TOKEN: '',
          },
        });
        expect(run.status, `walkthrough failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
        // The tour's answers, in order (see the README's expected-output comments).
        expect(run.stdout).toMatch(/^\d+ cents MRR, \d+ paying$/m);
        expect(run.stdout).toMatch(/^200$/m);
        expect(run.stdout).toMatch(/^active$/m);
        expect(run.stdout).toMatch(/^trialing$/m);
        expect(run.stdout).toMatch(/^0$\n^max_load, est_1rm, max_volume$/m);
        expect(run.stdout).toMatch(/^Desafio Constância 30 Dias: rank \d+, score 2$/m);

        const firstKey = /^FIRST_KEY=(tribes_sk_\S+)$/m.exec(run.stdout)![1];
        const secondKey = /^SECOND_KEY=(tribes_sk_\S+)$/m.exec(run.stdout)![1];
        expect(secondKey).not.toBe(firstKey);
        const before = fs.readFileSync(path.join(dataDir, 'first-before.json'), 'utf8');
        expect(JSON.parse(before).data.mrr_cents).toBeGreaterThan(0);
        expect(fs.readFileSync(path.join(dataDir, 'first-after.json'), 'utf8')).toBe(before);
        // The demo's own sanity check passed (else it exits 1, and the walkthrough with it); the
        // counts its story makes, from the first demo's summary:
        const summary = fs.readFileSync(path.join(dataDir, 'first-demo.txt'), 'utf8');
        const counts = (label: string) =>
          Object.fromEntries([...new RegExp(`^  ${label}: (.*)$`, 'm').exec(summary)![1]!.matchAll(/(\d+) (\w+)/g)].map((m) => [m[2]!, Number(m[1])]));
        const members = counts('members');
        expect(members).toMatchObject({ active: expect.any(Number), trial: 4, at_risk: expect.any(Number), churned: 7 });
        for (const n of Object.values(members)) expect(n).toBeGreaterThan(0);
        // Leaving at period end: three who asked, and the four runners of the paused community.
        expect(counts('subscriptions')).toMatchObject({ trialing: 4, past_due: 3, canceled: 7, cancel_at_period_end: 7 });
        expect(summary).toMatch(/\(ledger check: ok\)/);
        expect(summary).toMatch(/a manual payout of \d/);
        expect(summary).toMatch(/\d+ workouts logged, [1-9]\d* PRs/);
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
        await database?.drop();
        fs.rmSync('demo.env', { force: true });
      }
    },
    960_000,
  );
});

/** A throw-away database on TEST_DATABASE_URL's server, or undefined for the embedded one. */
async function ownDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return undefined;
  const name = `tribes_readme_${Date.now()}_${process.pid}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  url.search = '';
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}
