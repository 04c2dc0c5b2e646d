/* global process, Buffer, fetch */
// What the Ghost bench scripts share: where the install lives (BENCH_GHOST_DIR), the URL Ghost
// serves (from the config.production.json there), an Admin API JWT made from the integration key
// setup.sh saved (admin-key.json), and a staff session (setup.sh only needs it once, to create
// that integration).
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export const GHOST_DIR = resolve(process.env.BENCH_GHOST_DIR || join(homedir(), '.cache', 'tribes-bench-ghost'));

/** A path inside the install dir. */
export const inDir = (...parts) => join(GHOST_DIR, ...parts);

const readJson = (name) => JSON.parse(readFileSync(inDir(name), 'utf8'));

/** http://host:port Ghost serves, as its config says (no trailing slash). */
export const ghostUrl = () => String(readJson('config.production.json').url).replace(/\/+$/, '');

/** The Admin API base, e.g. http://127.0.0.1:2368/ghost/api/admin. */
export const adminApi = () => `${ghostUrl()}/ghost/api/admin`;

/**
 * A fresh Admin API token for the "Bench" integration: HS256, kid = key id, aud /admin/, valid
 * 5 minutes (Ghost refuses tokens older than that, so every run gets a new one).
 */
export function adminJwt() {
  const { key } = readJson('admin-key.json');
  const [id, secret] = String(key).split(':');
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const head = b64({ alg: 'HS256', typ: 'JWT', kid: id });
  const body = b64({ iat: now, exp: now + 5 * 60, aud: '/admin/' });
  const sig = createHmac('sha256', Buffer.from(secret, 'hex')).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

export const authHeaders = () => ({ Authorization: `Ghost ${adminJwt()}` });

/** Logs in as the owner (credentials.json) and returns the session cookie (needs staffDeviceVerification off). */
export async function login() {
  const c = readJson('credentials.json');
  const r = await fetch(`${adminApi()}/session/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: ghostUrl() },
    body: JSON.stringify({ username: c.email, password: c.password }),
  });
  if (r.status !== 201 && r.status !== 200) throw new Error(`login as ${c.email} failed: ${r.status} ${await r.text()}`);
  const cookies = r.headers.getSetCookie().map((s) => s.split(';')[0]);
  if (!cookies.length) throw new Error('login returned no cookie');
  return cookies.join('; ');
}
