import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { buildTestApp, uniq, type TestApp } from './helpers.js';

let t: TestApp;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = t.app.server.address() as { port: number };
  env = { TRIBES_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN: t.adminToken };
});
afterAll(() => t.close());

describe('operator CLI', () => {
  it('creates a creator through the admin API and prints its data as JSON', async () => {
    const email = `cli-${uniq()}@example.com`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'creators', 'create', '--name', 'Cli Person', '--email', email], {
      env: { ...process.env, ...env },
    });
    const data = JSON.parse(stdout);
    expect(data.creator).toMatchObject({ name: 'Cli Person', email });
    expect(data.api_key).toMatch(/^tribes_sk_/);
  });

  it('issues, lists and revokes keys', async () => {
    const created = (await runCli(['creators', 'create', '--name', 'K', '--email', `k-${uniq()}@example.com`], env)) as any;
    const issued = (await runCli(['api-keys', 'create', '--creator', created.creator.id], env)) as any;
    expect(issued.api_key).toMatch(/^tribes_sk_/);
    const revoked = (await runCli(['api-keys', 'revoke', '--key', issued.id], env)) as any;
    expect(revoked.revoked_at).toBeTruthy();
    const listed = (await runCli(['api-keys', 'list', '--creator', created.creator.id], env)) as any[];
    expect(listed).toHaveLength(2);
  });

  it("prints a one-time sign-in link to a creator's dashboard, found by e-mail", async () => {
    const email = `link-${uniq()}@example.com`;
    const created = (await runCli(['creators', 'create', '--name', 'D', '--email', email], env)) as any;
    const link = (await runCli(['creators', 'login-link', '--email', email.toUpperCase()], env)) as any;
    expect(link).toMatchObject({ creator_id: created.creator.id, url: expect.stringMatching(/\/dashboard\/sign-in\?token=tribes_login_[A-Za-z0-9]{40}$/) });
    await expect(runCli(['creators', 'login-link', '--email', `nobody-${uniq()}@example.com`], env)).rejects.toThrow(/404 not_found/);
    await expect(runCli(['creators', 'login-link'], env)).rejects.toThrow(/--email is required/);
  });

  it('runs a reconciliation and prints its report', async () => {
    const created = (await runCli(['creators', 'create', '--name', 'R', '--email', `r-${uniq()}@example.com`], env)) as any;
    const report = (await runCli(['reconcile', '--creator', created.creator.id], env)) as Record<string, number>;
    expect(report).toMatchObject({ errors: 0, creators: 1 });
    expect(report).toHaveProperty('subscriptions_fixed');
  });

  it("verifies a creator's ledger at the processor", async () => {
    const created = (await runCli(['creators', 'create', '--name', 'L', '--email', `l-${uniq()}@example.com`], env)) as any;
    const ledger = (await runCli(['ledger', 'verify', '--creator', created.creator.id], env)) as any;
    expect(ledger).toMatchObject({ ok: true, currency: 'brl', charges: { count: 0 }, all_time_net_cents: 0 });
    expect(ledger.checks.length).toBeGreaterThanOrEqual(3);
  });

  it('reports API errors and missing flags in words', async () => {
    const email = `twice-${uniq()}@example.com`;
    await runCli(['creators', 'create', '--name', 'A', '--email', email], env);
    await expect(runCli(['creators', 'create', '--name', 'B', '--email', email], env)).rejects.toThrow(/409 email_taken/);
    await expect(runCli(['creators', 'create', '--name', 'B'], env)).rejects.toThrow(/--email is required/);
    await expect(runCli(['creators', 'create', '--name', 'B', '--email', 'x@y.z'], { ...env, TRIBES_URL: 'http://127.0.0.1:1' })).rejects.toThrow(/Cannot reach/);
  });
});
