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
    'runs every runnable shell block against a started server, and a second demo makes an independent creator',
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-readme-'));
      const database = await ownDatabase();
      const [port, simPort] = [await freePort(), await freePort()];
      const out = path.join(dataDir, 'second-demo.json');
      // After the walkthrough: a second demo, and the first creator's figures, unchanged by it.
      const after = [
        `curl -s localhost:${port}/api/v1/creator-metrics -H "Authorization: Bearer $TRIBES_KEY" > "$DATA_DIR/first-before.json"`,
        `npm run --silent demo -- --json > "${out}"`,
        `curl -s localhost:${port}/api/v1/creator-metrics -H "Authorization: Bearer $TRIBES_KEY" > "$DATA_DIR/first-after.json"`,
        'echo "FIRST_KEY=$TRIBES_KEY"',
      ].join('\n');
      const script = walkthroughScript(shellBlocks(readme()), { port, simPort, after });
      try {
        const run = spawnSync('bash', ['-c', script], {
          encoding: 'utf8',
          // Three demos and a build: minutes on a loaded 2-core machine (CI runs test files two at a time).
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

        const second = JSON.parse(fs.readFileSync(out, 'utf8'));
        const firstKey = /^FIRST_KEY=(\S+)$/m.exec(run.stdout)![1];
        expect(second.api_key).not.toBe(firstKey);
        expect(fs.readFileSync(path.join(dataDir, 'first-after.json'), 'utf8')).toBe(fs.readFileSync(path.join(dataDir, 'first-before.json'), 'utf8'));
        // The demo's own sanity check passed (else it exits 1); its figures, seen through the API:
        expect(second.member_statuses).toMatchObject({ active: expect.any(Number), trial: 4, at_risk: expect.any(Number), churned: 7 });
        for (const n of Object.values(second.member_statuses)) expect(n).toBeGreaterThan(0);
        // Leaving at period end: three who asked, and the four runners of the paused community.
        expect(second.subscription_statuses).toMatchObject({ trialing: 4, past_due: 3, canceled: 7, cancel_at_period_end: 7 });
        expect(second.mrr_cents).toBeGreaterThan(0);
        expect(second.guide_sees_locked_post).toBe(true);
        expect(second.ledger_ok).toBe(true);
        expect(second.balance.all_time_cents).toBe(second.ledger_all_time_net_cents);
        expect(second.refunds).toBe(1);
        expect(second.payouts.manual).toBeGreaterThan(0);
        expect(second.workouts.prs).toBeGreaterThan(0);
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
