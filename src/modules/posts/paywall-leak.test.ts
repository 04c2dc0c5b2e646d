import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribedMember } from '../../../test/challenges-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, uniq, type TestApp, type TestMember } from '../../../test/helpers.js';
import { asMember, createPost, creatorPost } from '../../../test/posts-kit.js';

/**
 * The leak walk (issue #14): a member who may not read a post walks every member-facing route
 * and no answer — whatever its status — carries anything of the post beyond its teaser; a
 * member who may read it walks the same routes and finds every secret, so the walk can fail.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const MEMBER_FACING = /^\/api\/v1\/(member|discover)(\/|$)/;

interface Route {
  method: string;
  /** OpenAPI form: /api/v1/member/posts/{id}. */
  path: string;
  query: string[];
}
const keyOf = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

/** The member-facing routes Fastify registered, from printRoutes' tree (hidden ones included), as `METHOD /path/{param}`. */
function registeredRoutes(): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+) \(([^)]*)\)$/u.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack[depth] = (depth ? stack[depth - 1]! : '') + m[2]!;
    const path = stack[depth]!.replace(/:(\w+)/g, '{$1}');
    if (!MEMBER_FACING.test(path)) continue;
    for (const method of m[3]!.split(', ')) if (method !== 'HEAD') out.push(`${method} ${path}`);
  }
  return out;
}

/** Every member-facing route: the OpenAPI document's (with their query parameters) and any registered one it leaves out. */
async function memberFacingRoutes(): Promise<Route[]> {
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  const paths = json(res).paths as Record<string, Partial<Record<(typeof METHODS)[number], { parameters?: Array<{ in: string; name: string }> }>>>;
  const routes: Route[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!MEMBER_FACING.test(path)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (op) routes.push({ method: method.toUpperCase(), path, query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name) });
    }
  }
  const registered = registeredRoutes();
  if (routes.length === 0 || registered.length === 0) throw new Error('no member-facing routes found: the walk would prove nothing');
  const documented = new Set(routes.map(keyOf));
  for (const key of registered) if (!documented.has(key)) routes.push({ method: key.split(' ')[0]!, path: key.split(' ')[1]!, query: ['community_id', 'limit'] });
  // Reads first, then writes, deletions, and logging out (it revokes the walker's token) last.
  const order = (r: Route) => (r.path.endsWith('/logout') ? 3 : r.method === 'GET' ? 0 : r.method === 'DELETE' ? 2 : 1);
  return routes.sort((a, b) => order(a) - order(b));
}

/** The feed's routes: the walk must reach every one of them (with the status the paywall gives), or it proved nothing. */
const FEED_ROUTES = {
  feed: 'GET /api/v1/member/feed',
  read: 'GET /api/v1/member/posts/{id}',
  kudos: 'POST /api/v1/member/posts/{id}/kudos',
  unkudos: 'DELETE /api/v1/member/posts/{id}/kudos',
  comments: 'GET /api/v1/member/posts/{id}/comments',
  comment: 'POST /api/v1/member/posts/{id}/comments',
  uncomment: 'DELETE /api/v1/member/posts/{id}/comments/{comment_id}',
  vote: 'POST /api/v1/member/posts/{id}/poll-votes',
};

const hex = () => crypto.randomUUID().replaceAll('-', '');

/** A public community with Basic < Pro < Elite, and an Elite post whose every part is a unique secret, with a comment by an Elite member. */
async function secretPost() {
  const creator = await createCreator(t);
  const { id: communityId } = await createCommunity(t, creator);
  const tiers: Record<string, string> = {};
  for (const [i, name] of ['Basic', 'Pro', 'Elite'].entries()) tiers[name] = (await createTier(t, creator, communityId, { name, price_cents: 1000 * (i + 1) })).id;
  const s = {
    content: `contentsecret${hex()}`,
    bold: `boldsecret${hex()}`,
    label: `labelsecret${hex()}`,
    linkHost: `vault${hex()}`,
    linkPath: `path${hex()}`,
    image: crypto.randomUUID(),
    video: crypto.randomUUID(),
    question: `questionsecret${hex()}`,
    option0: `optionsecret${hex()}`,
    option1: `optionsecret${hex()}`,
    comment: `commentsecret${hex()}`,
  };
  // The secrets come after 200 characters, so the derived preview holds none of them.
  const content = `${'Recovery matters as much as training. '.repeat(6)}\n\nThen ${s.content}, **${s.bold}** and [${s.label}](https://${s.linkHost}.example.com/${s.linkPath}).`;
  const post = await createPost(t, creator, {
    community_id: communityId,
    tier_min_id: tiers.Elite,
    content,
    media: [
      { type: 'image', url: `https://cdn.example.com/${s.image}.jpg` },
      { type: 'video', url: `https://cdn.example.com/${s.video}.mp4` },
    ],
    poll: { question: `${s.question}?`, options: [s.option0, s.option1] },
  });
  const author = await subscribedMember(t, creator, { communityId, tierId: tiers.Elite! });
  const made = await asMember(t, author, 'POST', `/posts/${post.id}/comments`, { body: `Great post ${s.comment}` });
  expect(made.statusCode, made.body).toBe(201);

  const stored = JSON.stringify(await creatorPost(t, creator, post.id));
  for (const secret of Object.values(s).filter((x) => x !== s.comment)) expect(stored, 'the creator sees every part of the post').toContain(secret);
  const preview = (await creatorPost(t, creator, post.id)).preview as string;
  for (const secret of Object.values(s)) expect(preview).not.toContain(secret);
  return { creator, communityId, tiers, postId: post.id, commentId: json(made).data.id as string, secrets: Object.values(s), tag: uniq() };
}

type Fixture = Awaited<ReturnType<typeof secretPost>>;

interface Walked {
  route: string;
  url: string;
  status: number;
  body: string;
  /** The body and the headers, lower-cased: everything the member received. */
  received: string;
}

/** Sends the walker down every member-facing route, path parameters filled from the fixture, each GET with its query and without. */
async function walk(f: Fixture, walker: TestMember & { name: string }): Promise<Walked[]> {
  const routes = await memberFacingRoutes();
  const params: Record<string, string> = { id: f.postId, comment_id: f.commentId };
  const query: Record<string, string> = { community_id: f.communityId, limit: '100' };
  const bodies: Record<string, unknown> = {
    [FEED_ROUTES.comment]: { body: 'Walking by' },
    [FEED_ROUTES.vote]: { options: [0] },
    'POST /api/v1/member/checkout-sessions': { tier_id: f.tiers.Elite },
    'POST /api/v1/member/login': { email: walker.email, password: walker.password },
    'POST /api/v1/member/signup': { name: walker.name, email: `walker-${uniq()}@example.com`, password: `pw-${uniq()}-long-enough` },
  };
  const walked: Walked[] = [];
  for (const route of routes) {
    const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (!(name in params)) throw new Error(`the walk has no value for {${name}} in ${keyOf(route)}: teach it one`);
      return params[name]!;
    });
    const filled = new URLSearchParams(route.query.filter((q) => q in query).map((q) => [q, query[q]!])).toString();
    const urls = [filled ? `${path}?${filled}` : path, ...(route.method === 'GET' && filled ? [path] : [])];
    for (const url of urls) {
      const payload = bodies[keyOf(route)] ?? (route.method === 'GET' || route.method === 'DELETE' ? undefined : {});
      // Each walker sends the keys the one before sent: a stored answer must stay its owner's.
      const key = route.method === 'POST' ? { 'idempotency-key': `walk-${f.tag}-${route.method}-${route.path}` } : {};
      const res = await t.app.inject({ method: route.method as 'GET', url, headers: { ...walker.headers, ...key }, ...(payload === undefined ? {} : { payload: payload as object }) });
      walked.push({ route: keyOf(route), url, status: res.statusCode, body: res.body, received: `${res.body}\n${JSON.stringify(res.headers)}`.toLowerCase() });
    }
  }
  const reached = new Set(walked.map((w) => w.route));
  for (const route of Object.values(FEED_ROUTES)) expect(reached.has(route), `the walk reached ${route}`).toBe(true);
  expect(reached.has('GET /api/v1/discover/communities'), 'the walk reached discovery').toBe(true);
  return walked;
}

/** The status of each feed route, called with its parameters and query filled. */
const statusesOf = (walked: Walked[]) =>
  Object.fromEntries(Object.entries(FEED_ROUTES).map(([name, route]) => [name, walked.find((w) => w.route === route)!.status]));

const leaksOf = (walked: Walked[], secrets: string[]) =>
  walked.flatMap((w) => secrets.filter((s) => w.received.includes(s.toLowerCase())).map((s) => `${w.route} (${w.url}, ${w.status}) carries ${s}`));

/** The walk of a member who reads the post in full: every secret is reachable, so a walk that finds none means something. */
async function entitledWalk(f: Fixture) {
  const name = 'Elite Reader';
  const reader = Object.assign(await subscribedMember(t, f.creator, { communityId: f.communityId, tierId: f.tiers.Elite! }, { name, signUp: true }), { name });
  const walked = await walk(f, reader);
  expect(statusesOf(walked)).toEqual({ feed: 200, read: 200, kudos: 201, unkudos: 200, comments: 200, comment: 201, uncomment: 403, vote: 200 });
  const found = new Set(walked.flatMap((w) => f.secrets.filter((s) => w.received.includes(s.toLowerCase()))));
  expect(f.secrets.filter((s) => !found.has(s)), 'secrets a reader with access never saw').toEqual([]);
}

const walkers: Array<[string, (f: Fixture) => Promise<TestMember>]> = [
  ['a member on the lowest tier', (f) => subscribedMember(t, f.creator, { communityId: f.communityId, tierId: f.tiers.Basic! }, { name: 'Basic Walker', signUp: true })],
  ['a member with no subscription, in a public community', () => createMember(t, { name: 'Stranger Walker' })],
  ['a member whose subscription to the top tier was canceled', (f) => subscribedMember(t, f.creator, { communityId: f.communityId, tierId: f.tiers.Elite! }, { name: 'Former Walker', status: 'canceled', signUp: true })],
];

describe('the leak walk: every member-facing route, every method', () => {
  it.each(walkers)('shows %s nothing of a top-tier post beyond its teaser, on any route and with any status', async (_, make) => {
    const f = await secretPost();
    await entitledWalk(f);

    const walker = Object.assign(await make(f), { name: 'Locked Walker' });
    const walked = await walk(f, walker);
    expect(leaksOf(walked, f.secrets)).toEqual([]);
    expect(statusesOf(walked)).toEqual({ feed: 200, read: 200, kudos: 403, unkudos: 403, comments: 403, comment: 403, uncomment: 403, vote: 403 });
    const read = JSON.parse(walked.find((w) => w.route === FEED_ROUTES.read)!.body) as { data: unknown };
    expect(read.data).toMatchObject({ id: f.postId, locked: true, media_count: 2, has_poll: true, preview: expect.stringMatching(/^Recovery matters/i) });
    expect(await creatorPost(t, f.creator, f.postId)).toMatchObject({ comments_count: 2, poll: { voters: 1 } });
  });
});
