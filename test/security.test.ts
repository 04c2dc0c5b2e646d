import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, subscribe } from './billing-kit.js';
import { createChallenge, subscribedMember } from './challenges-kit.js';
import { placeIn } from './members-kit.js';
import { asMember, createPost } from './posts-kit.js';
import {
  buildTestApp,
  createCommunity,
  createCreator,
  createExercise,
  createMember,
  createProgram,
  createTier,
  createWorkout,
  json,
  type TestApp,
  type TestCreator,
} from './helpers.js';

/**
 * The cross-route security suite. It walks every route in the OpenAPI document, so a route
 * added later joins automatically: creator routes refuse a missing key (401), answer 404
 * for another creator's resource, and reject unknown body fields (400); admin routes
 * refuse creator keys; member routes (/api/v1/member/*) take only member tokens, which open
 * no creator or admin route; a creator key with scope `read` opens every creator GET and no
 * creator write. A route whose path names a resource without a factory below fails
 * the suite until one is added.
 */
type Factory = (t: TestApp, owner: TestCreator) => Promise<string>;
const RESOURCE_FACTORIES: Record<string, Factory> = {
  // Another key of the owner's (a read one: revoking it would be allowed, so only the tenant check stops an intruder).
  'api-keys': async (t, owner) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: owner.headers, payload: { name: 'Reporting', scope: 'read' } });
    if (res.statusCode !== 201) throw new Error(`api key factory failed: ${res.body}`);
    return json(res).data.id as string;
  },
  // A dashboard session of the owner's: a sign-in link minted with its key, opened.
  sessions: async (t, owner) => {
    const { url } = json(await t.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers: owner.headers })).data;
    const opened = await t.app.inject({ method: 'GET', url: url.slice(url.indexOf('/dashboard/sign-in')) });
    if (opened.statusCode !== 303) throw new Error(`session factory failed: ${opened.statusCode} ${opened.body}`);
    const cookie = String(opened.headers['set-cookie']).split(';')[0]!;
    return json(await t.app.inject({ method: 'GET', url: '/api/v1/dashboard/sessions', headers: { cookie } })).data[0].id as string;
  },
  communities: async (t, owner) => (await createCommunity(t, owner)).id,
  tiers: async (t, owner) => (await createTier(t, owner, (await createCommunity(t, owner)).id)).id,
  // A real subscription: hosted checkout paid at the simulator, mirrored by reconciliation.
  subscriptions: async (t, owner) => (await subscribe(t, { creator: owner, mirror: 'reconcile' })).subscription.id,
  // A real manual payout: paid funds made available by the simulator clock, schedule switched to manual.
  payouts: async (t, owner) => {
    const s = await subscribe(t, { creator: owner, mirror: 'reconcile' });
    await t.stripe.accounts.update(s.account, { settings: { payouts: { schedule: { interval: 'manual' } } } });
    await advanceDays(t, 8);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/payouts/manual', headers: owner.headers, payload: { amount_cents: 1000 } });
    if (res.statusCode !== 201) throw new Error(`payout factory failed: ${res.body}`);
    return json(res).data.id as string;
  },
  // A member of the owner's community (paid through hosted checkout).
  members: async (t, owner) => (await subscribe(t, { creator: owner, mirror: 'reconcile' })).member.id,
  exercises: async (t, owner) => (await createExercise(t, owner)).id,
  'workout-programs': async (t, owner) => (await createProgram(t, owner, (await createCommunity(t, owner)).id)).id,
  workouts: async (t, owner) => (await createWorkout(t, owner, (await createProgram(t, owner, (await createCommunity(t, owner)).id)).id)).id,
  // A challenge starting tomorrow in a community of the owner's.
  challenges: async (t, owner) => (await createChallenge(t, owner, { community_id: (await createCommunity(t, owner)).id, starts_at: new Date(Date.now() + 86_400_000) })).id,
  // A community's metrics: the path names the community.
  'creator-metrics': async (t, owner) => (await createCommunity(t, owner)).id,
  posts: async (t, owner) => (await createPost(t, owner, { community_id: (await createCommunity(t, owner)).id })).id,
  'webhook-endpoints': async (t, owner) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: owner.headers, payload: { url: 'https://hooks.example.com/tribes' } });
    if (res.statusCode !== 201) throw new Error(`webhook endpoint factory failed: ${res.body}`);
    return json(res).data.id as string;
  },
  // A delivery (a ping) to another endpoint of the owner's (the path's endpoint is another one: 404 either way for an intruder).
  deliveries: async (t, owner) => {
    const made = await t.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: owner.headers, payload: { url: 'https://hooks.example.com/tribes' } });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${json(made).data.id}/test`, headers: owner.headers });
    if (res.statusCode !== 201) throw new Error(`delivery factory failed: ${res.body}`);
    return json(res).data.id as string;
  },
  // A member's comment on a post of the owner's (the path's post is another of the owner's: 404 either way for an intruder).
  comments: async (t, owner) => {
    const place = await placeIn(t, owner);
    const post = await createPost(t, owner, { community_id: place.communityId });
    const res = await asMember(t, await subscribedMember(t, owner, place), 'POST', `/posts/${post.id}/comments`, { body: 'Great session!' });
    if (res.statusCode !== 201) throw new Error(`comment factory failed: ${res.body}`);
    return json(res).data.id as string;
  },
};

/**
 * Bodies for the cross-tenant 404 check where `{}` is refused by the schema before the
 * route looks the resource up (PATCH /challenges needs at least one field): a body that
 * passes validation, so the answer is the tenant check's.
 */
const PASSING_BODIES: Record<string, object> = {
  'PATCH /api/v1/challenges/{id}': { name: 'Mine now' },
  'PATCH /api/v1/webhook-endpoints/{id}': { description: 'Mine now' },
  'POST /api/v1/webhook-endpoints/{id}/recover': { since: '2026-01-01T00:00:00Z' },
};

const PUBLIC_PATHS = new Set(['/health', '/ready']);

interface Operation {
  method: string;
  path: string;
  hasBody: boolean;
  isAdmin: boolean;
  /** Authenticated by a member token, not a creator key. */
  isMember: boolean;
  /** The creator key scope the document says the operation needs. */
  scope: string | undefined;
}

let t: TestApp;
let operations: Operation[];
beforeAll(async () => {
  t = await buildTestApp();
  const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  operations = [];
  for (const [path, item] of Object.entries<Record<string, { requestBody?: unknown; security?: { creatorKey?: string[] }[] }>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (PUBLIC_PATHS.has(path) || (Array.isArray(op.security) && op.security.length === 0)) continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        hasBody: op.requestBody !== undefined,
        isAdmin: path.startsWith('/api/v1/admin'),
        isMember: path.startsWith('/api/v1/member/'),
        scope: op.security?.[0]?.creatorKey?.[0],
      });
    }
  }
});
afterAll(() => t.close());

const isCreatorRoute = (o: Operation) => !o.isAdmin && !o.isMember;

const anyId = (path: string) => path.replace(/\{[a-z_]+\}/g, '0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b');

/** The headers of a new key of the owner's with scope `read`. */
async function readKeyOf(owner: TestCreator): Promise<{ authorization: string }> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: owner.headers, payload: { name: 'Read only', scope: 'read' } });
  if (res.statusCode !== 201) throw new Error(`read key failed: ${res.body}`);
  return { authorization: `Bearer ${json(res).data.api_key as string}` };
}

/** A concrete URL for the operation, its path ids naming resources the owner really has. */
async function urlFor(op: Operation, owner: TestCreator): Promise<string> {
  let url = op.path;
  for (const match of op.path.matchAll(/\/([a-z-]+)\/\{([a-z_]+)\}/g)) {
    const [, resource, param] = match;
    const factory = RESOURCE_FACTORIES[resource!];
    if (!factory) throw new Error(`security suite: add a factory for "${resource}" (route ${op.method} ${op.path})`);
    url = url.replace(`{${param}}`, await factory(t, owner));
  }
  return url;
}

describe('security suite over every route', () => {
  it('finds the creator routes to check', () => {
    expect(operations.filter(isCreatorRoute).length).toBeGreaterThanOrEqual(6);
    expect(operations.filter((o) => o.isMember).length).toBeGreaterThanOrEqual(2);
  });

  it('answers 401 with WWW-Authenticate on every protected route without credentials', async () => {
    for (const op of operations) {
      const url = op.path.replace(/\{[a-z_]+\}/g, '0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b');
      const res = await t.app.inject({ method: op.method as 'GET', url, ...(op.hasBody ? { payload: {} } : {}) });
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(401);
      expect(res.headers['www-authenticate'], `${op.method} ${op.path}`).toMatch(/^Bearer/);
    }
  });

  it('refuses a creator key on every admin route', async () => {
    const creator = await createCreator(t);
    for (const op of operations.filter((o) => o.isAdmin)) {
      const url = op.path.replace(/\{[a-z_]+\}/g, creator.id);
      const res = await t.app.inject({ method: op.method as 'GET', url, headers: creator.headers, ...(op.hasBody ? { payload: {} } : {}) });
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(401);
    }
  });

  it("answers 404 on every creator route that names another creator's resource", async () => {
    const owner = await createCreator(t);
    const intruder = await createCreator(t);
    for (const op of operations.filter((o) => isCreatorRoute(o) && o.path.includes('{'))) {
      const url = await urlFor(op, owner);
      const payload = PASSING_BODIES[`${op.method} ${op.path}`] ?? {};
      const res = await t.app.inject({ method: op.method as 'GET', url, headers: intruder.headers, ...(op.hasBody ? { payload } : {}) });
      expect(res.statusCode, `${op.method} ${url}`).toBe(404);
      expect(json(res).error.code).toBe('not_found');
    }
  });

  it('rejects an unknown body field on every creator route that takes a body', async () => {
    const owner = await createCreator(t);
    for (const op of operations.filter((o) => isCreatorRoute(o) && o.hasBody)) {
      const url = await urlFor(op, owner);
      const res = await t.app.inject({ method: op.method as 'POST', url, headers: owner.headers, payload: { __not_a_field: 1 } });
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(400);
      expect(json(res).error.details, `${op.method} ${op.path}`).toContainEqual({ field: '__not_a_field', message: 'is not a known field' });
    }
  });

  it('refuses a read-only key on every creator write with 403 insufficient_scope, before looking anything up', async () => {
    const owner = await createCreator(t);
    const reader = await readKeyOf(owner);
    const writes = operations.filter((o) => isCreatorRoute(o) && o.method !== 'GET');
    expect(writes.length).toBeGreaterThanOrEqual(10);
    for (const op of writes) {
      expect(op.scope, `${op.method} ${op.path} declares`).toBe('full');
      const res = await t.app.inject({ method: op.method as 'POST', url: anyId(op.path), headers: reader, ...(op.hasBody ? { payload: {} } : {}) });
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(403);
      expect(json(res).error.code, `${op.method} ${op.path}`).toBe('insufficient_scope');
    }
  });

  it('lets a read-only key through on every creator GET', async () => {
    const owner = await createCreator(t);
    const reader = await readKeyOf(owner);
    const reads = operations.filter((o) => isCreatorRoute(o) && o.method === 'GET');
    expect(reads.length).toBeGreaterThanOrEqual(10);
    for (const op of reads) {
      expect(op.scope, `GET ${op.path} declares`).toBe('read');
      // Unknown ids: 404 (or 400 for a missing filter) shows the key was accepted, as 200 would.
      const res = await t.app.inject({ method: 'GET', url: anyId(op.path), headers: reader });
      expect([401, 403], `GET ${op.path} answered ${res.statusCode}: ${res.body.slice(0, 200)}`).not.toContain(res.statusCode);
    }
  });

  it('refuses a creator key on every member route', async () => {
    const creator = await createCreator(t);
    for (const op of operations.filter((o) => o.isMember)) {
      const res = await t.app.inject({ method: op.method as 'GET', url: anyId(op.path), headers: creator.headers, ...(op.hasBody ? { payload: {} } : {}) });
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(401);
      expect(res.headers['www-authenticate'], `${op.method} ${op.path}`).toMatch(/^Bearer/);
    }
  });

  it('refuses a member token on every creator and admin route', async () => {
    const member = await createMember(t);
    for (const op of operations.filter((o) => !o.isMember)) {
      const res = await t.app.inject({ method: op.method as 'GET', url: anyId(op.path), headers: member.headers, ...(op.hasBody ? { payload: {} } : {}) });
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(401);
    }
  });

  it('rejects an unknown body field on every member route that takes a body', async () => {
    const member = await createMember(t);
    for (const op of operations.filter((o) => o.isMember && o.hasBody)) {
      const res = await t.app.inject({ method: op.method as 'POST', url: anyId(op.path), headers: member.headers, payload: { __not_a_field: 1 } });
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(400);
      expect(json(res).error.details, `${op.method} ${op.path}`).toContainEqual({ field: '__not_a_field', message: 'is not a known field' });
    }
  });
});
