/* global process, console, fetch, FormData, Blob, setTimeout */
// The steps of setup.sh that talk to Ghost or to MariaDB, one per command; each does nothing
// when its work is already done, and says which:
//   node bench/ghost/setup-steps.mjs config     write $BENCH_GHOST_DIR/config.production.json
//   node bench/ghost/setup-steps.mjs database   create the database (through Ghost's own mysql2)
//   node bench/ghost/setup-steps.mjs owner      create the owner (Ghost's setup API); Ghost running
//   node bench/ghost/setup-steps.mjs key        create the "Bench" integration, save its Admin API key
//   node bench/ghost/setup-steps.mjs members    seed BENCH_GHOST_MEMBERS members by CSV import, verify
// (a second argument, e.g. 9/9, prefixes what it prints).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { GHOST_DIR, adminApi, authHeaders, ghostUrl, inDir, login } from './lib.mjs';

const env = process.env;
const mysql = {
  host: env.BENCH_GHOST_MYSQL_HOST || '127.0.0.1',
  port: Number(env.BENCH_GHOST_MYSQL_PORT || 3306),
  user: env.BENCH_GHOST_MYSQL_USER || 'root',
  password: env.BENCH_GHOST_MYSQL_PASSWORD ?? '',
  database: env.BENCH_GHOST_MYSQL_DATABASE || 'ghost_bench',
};
const port = Number(env.BENCH_GHOST_PORT || 2368);
const members = Number(env.BENCH_GHOST_MEMBERS || 10000);
const label = process.argv[3] ? `${process.argv[3]} ` : '';
const say = (msg) => console.log(`[ghost setup] ${label}${msg}`);
const ghostRequire = () => createRequire(inDir('current', 'package.json'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const steps = {
  // Production mode, MariaDB, quiet logs to files, no mail, password login without an e-mailed code.
  async config() {
    const config = {
      url: `http://127.0.0.1:${port}`,
      server: { port, host: '127.0.0.1' },
      database: {
        client: 'mysql',
        connection: { host: mysql.host, port: mysql.port, user: mysql.user, password: mysql.password, database: mysql.database, charset: 'utf8mb4' },
      },
      mail: { transport: 'stub' },
      logging: { level: 'error', transports: ['file'], path: inDir('content', 'logs') + '/', rotation: { enabled: false } },
      process: 'local',
      paths: { contentPath: inDir('content') },
      security: { staffDeviceVerification: false },
      privacy: { useUpdateCheck: false, useRpcPing: false, useStructuredData: false },
    };
    const file = inDir('config.production.json');
    const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (before !== undefined && JSON.stringify(JSON.parse(before)) === JSON.stringify(config)) {
      say(`config ${file}: already as wanted (port ${port}, database ${mysql.database} on ${mysql.host}:${mysql.port})`);
      return;
    }
    writeFileSync(file, JSON.stringify(config, null, 2) + '\n');
    say(`config ${file}: ${before === undefined ? 'written' : 'rewritten'} (port ${port}, database ${mysql.database} on ${mysql.host}:${mysql.port})`);
  },

  async database() {
    if (!/^\w+$/.test(mysql.database)) throw new Error(`BENCH_GHOST_MYSQL_DATABASE must be letters, digits or _ (got ${mysql.database})`);
    const { createConnection } = ghostRequire()('mysql2/promise');
    let conn;
    try {
      conn = await createConnection({ host: mysql.host, port: mysql.port, user: mysql.user, password: mysql.password });
    } catch (err) {
      throw new Error(
        `cannot connect to MariaDB/MySQL at ${mysql.host}:${mysql.port} as ${mysql.user} (${err.code ?? err.message}); ` +
          'start it or set BENCH_GHOST_MYSQL_HOST/PORT/USER/PASSWORD',
      );
    }
    try {
      const [[version]] = await conn.query('select version() as v');
      const [rows] = await conn.query('select schema_name from information_schema.schemata where schema_name = ?', [mysql.database]);
      if (rows.length) {
        say(`database ${mysql.database}: already there (server ${version.v})`);
        return;
      }
      await conn.query(`create database \`${mysql.database}\` character set utf8mb4 collate utf8mb4_general_ci`);
      say(`database ${mysql.database}: created (server ${version.v}); Ghost makes its tables on first start`);
    } finally {
      await conn.end();
    }
  },

  async owner() {
    const api = adminApi();
    const status = await (await fetch(`${api}/authentication/setup/`)).json();
    const credFile = inDir('credentials.json');
    if (status.setup?.[0]?.status) {
      if (!existsSync(credFile)) throw new Error(`Ghost's owner exists but ${credFile} is missing: reset the database (see bench/ghost/README.md)`);
      say(`owner: already set up (${JSON.parse(readFileSync(credFile, 'utf8')).email})`);
      return;
    }
    if (!existsSync(credFile)) {
      const creds = { name: 'Bench Owner', email: 'owner@bench.example.com', password: randomBytes(18).toString('base64url'), blogTitle: 'Ghost Bench', url: ghostUrl() };
      writeFileSync(credFile, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
    }
    const c = JSON.parse(readFileSync(credFile, 'utf8'));
    const r = await fetch(`${api}/authentication/setup/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: ghostUrl() },
      body: JSON.stringify({ setup: [{ name: c.name, email: c.email, password: c.password, blogTitle: c.blogTitle }] }),
    });
    if (r.status !== 201) throw new Error(`owner setup answered ${r.status}: ${await r.text()}`);
    say(`owner: created (${c.email}; password in ${credFile})`);
  },

  // Admin API key of a custom integration "Bench": what the bench authenticates with (a JWT per run).
  async key() {
    const api = adminApi();
    const keyFile = inDir('admin-key.json');
    if (existsSync(keyFile)) {
      const r = await fetch(`${api}/members/?limit=1`, { headers: authHeaders() });
      if (r.status === 200) {
        say(`integration key: already there, and accepted (${keyFile})`);
        return;
      }
      say(`integration key in ${keyFile} refused (${r.status}); getting a new one`);
    }
    const cookie = await login();
    const headers = { 'Content-Type': 'application/json', Origin: ghostUrl(), Cookie: cookie };
    const list = await (await fetch(`${api}/integrations/?include=api_keys&limit=all`, { headers })).json();
    let integration = list.integrations?.find((i) => i.name === 'Bench');
    let what = 'found';
    if (!integration) {
      const r = await fetch(`${api}/integrations/?include=api_keys`, { method: 'POST', headers, body: JSON.stringify({ integrations: [{ name: 'Bench' }] }) });
      const j = await r.json();
      if (r.status !== 201) throw new Error(`creating the integration answered ${r.status}: ${JSON.stringify(j)}`);
      integration = j.integrations[0];
      what = 'created';
    }
    const k = integration.api_keys.find((x) => x.type === 'admin');
    const key = k.secret.includes(':') ? k.secret : `${k.id}:${k.secret}`;
    writeFileSync(keyFile, JSON.stringify({ integration_id: integration.id, key }, null, 2) + '\n', { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    const check = await fetch(`${api}/members/?limit=1`, { headers: authHeaders() });
    if (check.status !== 200) throw new Error(`the new key is refused: ${check.status}`);
    say(`integration key: "Bench" ${what}, key saved in ${keyFile}`);
  },

  // Exactly N free members through Ghost's own CSV import (POST /members/upload/). Names from
  // @faker-js/faker 7.6.0 (a Ghost dependency) with a fixed seed, so every install holds the same
  // members: unique e-mails like first.last.N@example.org, created_at spread over 2023-01 ... 2025-06,
  // 75 % subscribed to the default newsletter, 10 % with a note. The label Ghost adds to an import
  // ("Import <date>") is deleted afterwards, so members have no labels.
  async members() {
    const api = adminApi();
    const count = async () => {
      const r = await fetch(`${api}/members/?limit=1`, { headers: authHeaders() });
      if (r.status !== 200) throw new Error(`counting members answered ${r.status}: ${await r.text()}`);
      return (await r.json()).meta.pagination.total;
    };
    const before = await count();
    if (before === members) {
      say(`members: already ${members}`);
    } else if (before !== 0) {
      throw new Error(`Ghost holds ${before} members, not 0 nor ${members} (BENCH_GHOST_MEMBERS): reset the database (see bench/ghost/README.md)`);
    } else {
      const { faker } = ghostRequire()('@faker-js/faker');
      faker.seed(2368);
      const csvq = (s) => `"${String(s).replace(/"/g, '""')}"`;
      const start = Date.parse('2023-01-01T00:00:00Z');
      const span = Date.parse('2025-06-30T00:00:00Z') - start;
      const rows = ['email,name,note,subscribed_to_emails,created_at'];
      const seen = new Set();
      for (let i = 0; i < members; i++) {
        const first = faker.name.firstName();
        const last = faker.name.lastName();
        const local = `${first}.${last}`.toLowerCase().normalize('NFKD').replace(/[^a-z0-9.]/g, '');
        const email = `${local}.${i + 1}@${faker.helpers.arrayElement(['example.com', 'example.org', 'example.net', 'mail.example.com'])}`;
        if (seen.has(email)) throw new Error(`duplicate e-mail ${email}`);
        seen.add(email);
        const created = new Date(start + Math.floor((i / members) * span) + faker.datatype.number({ min: 0, max: 3600_000 })).toISOString();
        rows.push([csvq(email), csvq(`${first} ${last}`), i % 10 === 0 ? csvq(faker.lorem.sentence()) : '', i % 4 === 0 ? 'false' : 'true', created].join(','));
      }
      const form = new FormData();
      form.append('membersfile', new Blob([rows.join('\n') + '\n'], { type: 'text/csv' }), 'members.csv');
      const t0 = Date.now();
      const r = await fetch(`${api}/members/upload/`, { method: 'POST', headers: authHeaders(), body: form });
      if (!r.ok) throw new Error(`members upload answered ${r.status}: ${(await r.text()).slice(0, 500)}`);
      say(`members: CSV of ${members} uploaded (${r.status}); waiting for Ghost's import`);
      for (;;) {
        const c = await count();
        if (c >= members) break;
        if (Date.now() - t0 > 30 * 60_000) throw new Error(`import stuck at ${c}/${members} members after 30 min`);
        say(`members: ${c}/${members} after ${Math.round((Date.now() - t0) / 1000)} s`);
        await sleep(5000);
      }
      say(`members: imported in ${Math.round((Date.now() - t0) / 1000)} s`);
    }
    // The import's label, also after an import that was interrupted once done.
    const labels = (await (await fetch(`${api}/labels/?limit=all`, { headers: authHeaders() })).json()).labels ?? [];
    for (const label of labels.filter((l) => /^Import \d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(l.name))) {
      const d = await fetch(`${api}/labels/${label.id}/`, { method: 'DELETE', headers: authHeaders() });
      if (d.status !== 204) throw new Error(`deleting label "${label.name}" answered ${d.status}`);
      say(`members: deleted the import's label "${label.name}"`);
    }
    const total = await count();
    if (total !== members) throw new Error(`verify: Ghost counts ${total} members, expected ${members}`);
    const page = await fetch(`${api}/members/?limit=50`, { headers: authHeaders() });
    const rows = page.status === 200 ? (await page.json()).members.length : 0;
    if (rows !== Math.min(50, members)) throw new Error(`verify: GET /members/?limit=50 answered ${page.status} with ${rows} members`);
    say(`verified: total = ${total} members; GET /ghost/api/admin/members/?limit=50 answers 200 with ${rows}`);
  },
};

const step = steps[process.argv[2]];
if (!step) {
  console.error(`usage: node setup-steps.mjs ${Object.keys(steps).join('|')}  (install dir ${GHOST_DIR})`);
  process.exit(2);
}
try {
  await step();
} catch (err) {
  console.error(`[ghost setup] error: ${err.message}`);
  process.exit(1);
}
