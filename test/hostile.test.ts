import crypto from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answerClientError } from '../src/http/error-handler.js';
import { STATUS_BY_CODE } from '../src/http/errors.js';
import { subscribe } from './billing-kit.js';
import { createChallenge } from './challenges-kit.js';
import { createPost } from './posts-kit.js';
import { BENCH_PRESS_ID, buildTestApp, createExercise, createMember, createProgram, createWorkout, json, type TestApp } from './helpers.js';
import { operationsOf, type Audience, type Fixtures, type Operation } from './hostile/operations.js';
import { seededRng } from './hostile/random.js';
import { hostileRequests, type HostileRequest } from './hostile/requests.js';

/**
 * The hostile-input sweep: every operation of the OpenAPI document gets its valid request
 * and then that request with wrong types, out-of-range numbers, odd unicode, bad ids,
 * malformed escapes, malformed JSON, wrong content types, over-long text and nested junk
 * (test/hostile/). Whatever arrives, the answer stays inside the contract (DESIGN §3): never
 * a 5xx, and every 4xx is the error envelope with a code whose status it is.
 */
const SEED = 20_240_611;

let t: TestApp;
let operations: Operation[];
let fixtures: Fixtures;
let auth: Record<Audience, Record<string, string>>;
/** Logging out revokes the token it is sent with; that route gets a member of its own. */
let logoutAuth: Record<string, string>;

beforeAll(async () => {
  t = await buildTestApp();
  operations = operationsOf(json(await t.app.inject({ method: 'GET', url: '/openapi.json' })));
  // A member with a live subscription, so member routes get past access checks too.
  const { creator, member, communityId, tierId, subscription } = await subscribe(t, { mirror: 'reconcile' });
  const exercise = await createExercise(t, creator);
  const program = await createProgram(t, creator, communityId);
  const workout = await createWorkout(t, creator, program.id);
  // Running since yesterday in the member's community, so joining, leaving and the boards get past access checks.
  const challenge = await createChallenge(t, creator, { community_id: communityId, starts_at: new Date(Date.now() - 86_400_000) });
  // A public post with a poll in the member's community, and the member's comment on it, so engagement routes get past access checks.
  const post = await createPost(t, creator, { community_id: communityId, poll: { question: 'Which day?', options: ['Monday', 'Friday'] } });
  const comment = json(await t.app.inject({ method: 'POST', url: `/api/v1/member/posts/${post.id}/comments`, headers: member.headers, payload: { body: 'Count me in' } })).data;
  logoutAuth = (await createMember(t)).headers;
  auth = { creator: creator.headers, member: member.headers, admin: { authorization: `Bearer ${t.adminToken}` }, public: {} };
  fixtures = {
    byField: { community_id: communityId, tier_id: tierId, exercise_id: BENCH_PRESS_ID, workout_id: workout.id, member_id: member.id, creator_id: creator.id },
    byResource: {
      communities: communityId,
      tiers: tierId,
      subscriptions: subscription.id,
      exercises: exercise.id,
      'workout-programs': program.id,
      programs: program.id,
      workouts: workout.id,
      challenges: challenge.id,
      posts: post.id,
      'creator-metrics': communityId,
      comments: comment.id,
      creators: creator.id,
    },
    now: new Date().toISOString(),
  };
});
afterAll(() => t.close());

/** What is wrong with an answer, or undefined when it keeps the contract. */
function breach(res: { statusCode: number; body: string; headers: Record<string, unknown> }): string | undefined {
  if (!res.headers['x-request-id']) return 'no X-Request-Id';
  if (res.statusCode >= 500) return 'a 5xx';
  if (res.statusCode < 400) return undefined;
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    return 'a 4xx whose body is not JSON';
  }
  const error = body?.error;
  if (body?.success !== false || typeof error?.code !== 'string' || typeof error?.message !== 'string') return 'a 4xx without the error envelope';
  const status = (STATUS_BY_CODE as Record<string, number>)[error.code];
  if (status !== res.statusCode) return `code ${error.code} (${status ?? 'not in the closed list'}) on a ${res.statusCode}`;
  return undefined;
}

const clip = (text: string, n: number) => (text.length > n ? `${text.slice(0, n)}…` : text);
const describeRequest = (r: HostileRequest) =>
  `${r.method} ${clip(r.url, 160)} [${r.what}]${r.payload !== undefined ? ` ${r.headers['content-type'] ?? ''} ${JSON.stringify(clip(r.payload.toString(), 300))}` : ''}`;

describe('hostile input sweep over every route', () => {
  it('answers thousands of hostile requests without a 5xx, every 4xx in the error envelope', async () => {
    const rng = seededRng(SEED);
    const failures: string[] = [];
    let succeeded = 0;
    const pastAuth = new Set<string>();
    let sent = 0;
    // Canceling the subscription ends the member's access: that route goes last.
    const ordered = [...operations.filter((o) => !o.path.endsWith('/cancel')), ...operations.filter((o) => o.path.endsWith('/cancel'))];
    for (const op of ordered) {
      const headers = op.path.endsWith('/logout') ? logoutAuth : auth[op.audience];
      for (const request of hostileRequests(op, fixtures, headers, rng)) {
        const res = await t.app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.payload !== undefined ? { payload: request.payload } : {}) });
        sent++;
        if (res.statusCode < 300) succeeded++;
        if (res.statusCode !== 401) pastAuth.add(`${op.method} ${op.path}`);
        const problem = breach(res);
        if (problem) failures.push(`${problem}: ${describeRequest(request)} → ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    expect(failures.length, failures.slice(0, 40).join('\n')).toBe(0);
    expect(sent).toBeGreaterThanOrEqual(2_000);
    // Valid credentials took requests of every route past authentication, into validation.
    expect(operations.map((o) => `${o.method} ${o.path}`).filter((o) => !pastAuth.has(o))).toEqual([]);
    expect(succeeded).toBeGreaterThan(100);
    // ~2,750 requests one after another: ~15 s alone, more beside other files on a small machine.
  }, 120_000);
});

const envelope = (code: string) => ({ success: false, error: { code, message: expect.any(String) } });

/** Sends `text` on a fresh connection and reads everything the server writes until it closes. */
async function rawExchange(text: string): Promise<{ status: number; head: string; body: string }> {
  const { port } = t.app.server.address() as net.AddressInfo;
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.on('error', () => {}); // the server closes on us: that is the point
  socket.write(text);
  await once(socket, 'close');
  const raw = Buffer.concat(chunks).toString('utf8');
  const split = raw.indexOf('\r\n\r\n');
  return { status: Number(raw.slice(9, 12)), head: raw.slice(0, split), body: raw.slice(split + 4) };
}

describe('errors stay inside the contract', () => {
  it('refuses a page beyond 10,000 on every list with a 400 that names page, says the bound and points to filters', async () => {
    const lists = operations.filter((o) => 'page' in o.query);
    expect(lists.length).toBeGreaterThanOrEqual(10);
    for (const op of lists) {
      for (const page of ['100000000000000000000', '10001', 'Infinity']) {
        // Path ids well formed (any UUID), so the page is what fails.
        const path = op.path.replace(/\{[a-z_]+\}/g, '0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b');
        const res = await t.app.inject({ method: op.method as 'GET', url: `${path}?page=${page}`, headers: auth[op.audience] });
        expect(res.statusCode, `${op.path}?page=${page}`).toBe(400);
        const { error } = json(res);
        expect(error.code).toBe('validation_error');
        expect(error.details).toEqual([{ field: 'page', message: expect.stringMatching(/at most 10000.*filters/) }]);
        expect(error.message).toMatch(/page must be at most 10000.*filters/);
      }
    }
    const deepest = await t.app.inject({ method: 'GET', url: '/api/v1/discover/communities?page=10000' });
    expect(deepest.statusCode).toBe(200);
    expect(json(deepest).pagination).toMatchObject({ page: 10000, limit: 20 });
  });

  it('answers a malformed percent-escape or a lone surrogate in the path with 400 in the error envelope', async () => {
    for (const segment of ['%E0%A4%A', '%ED%A0%80', '%zz']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/discover/communities/${segment}` });
      expect(res.statusCode, segment).toBe(400);
      expect(json(res), segment).toEqual(envelope('validation_error'));
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('answers an over-long path parameter with 414 uri_too_long in the error envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/communities/${'a'.repeat(150)}`, headers: auth.creator, query: { x: '1' } });
    expect(res.statusCode).toBe(414);
    expect(json(res)).toEqual(envelope('uri_too_long'));
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it("answers the ledger of a creator that does not exist with 404 not_found", async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/creators/${crypto.randomUUID()}/ledger`, headers: auth.admin });
    expect(res.statusCode).toBe(404);
    expect(json(res)).toEqual(envelope('not_found'));
  });

  describe('requests Node refuses before Fastify sees them', () => {
    beforeAll(async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
    });

    it('answers request headers over the size limit with 431 in the error envelope, then closes the connection', async () => {
      const res = await rawExchange(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(res.status).toBe(431);
      expect(JSON.parse(res.body)).toEqual(envelope('request_header_fields_too_large'));
      expect(res.head).toMatch(/\r\ncontent-type: application\/json/i);
      expect(res.head).toMatch(/\r\nx-request-id: [0-9a-f-]{36}/i);
      expect(res.head).toMatch(/\r\nconnection: close/i);
    });

    it('answers a request line that is not HTTP with 400 bad_request in the error envelope', async () => {
      const res = await rawExchange('NOT AN HTTP REQUEST\r\n\r\n');
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual(envelope('bad_request'));
    });

    it('still answers well-formed requests on the same server', async () => {
      const res = await rawExchange('GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      expect(res.status).toBe(200);
    });
  });

  it('writes nothing to a connection that is gone, and logs nothing for a reset', () => {
    const fakeSocket = (writable: boolean) => ({ writable, write: vi.fn(), destroy: vi.fn() });
    const log = { debug: vi.fn() } as any;
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const resetSocket = fakeSocket(true);
    answerClientError(reset, resetSocket as unknown as Duplex, log);
    expect(resetSocket.write).not.toHaveBeenCalled();
    expect(resetSocket.destroy).toHaveBeenCalled();
    expect(log.debug).not.toHaveBeenCalled();

    const gone = fakeSocket(false);
    answerClientError(Object.assign(new Error('Parse Error'), { code: 'HPE_HEADER_OVERFLOW' }), gone as unknown as Duplex, log);
    expect(gone.write).not.toHaveBeenCalled();
    expect(gone.destroy).toHaveBeenCalled();
  });
});
