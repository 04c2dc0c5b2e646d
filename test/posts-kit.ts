import { expect } from 'vitest';
import type { SubscriptionStatus } from '../src/db/types.js';
import { mirrorSubscription, type Place } from './members-kit.js';
import { json, mintMember, type TestApp, type TestCreator, type TestMember } from './helpers.js';

/** Feed fixtures: posts made and read through the creator and member APIs. */

export async function postPost(t: TestApp, creator: TestCreator, body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/api/v1/posts', headers: creator.headers, payload: { content: 'Hello, tribe!', ...body } });
}

/** Creates a post; expects 201 and returns its record. */
export async function createPost(t: TestApp, creator: TestCreator, body: Record<string, unknown>) {
  const res = await postPost(t, creator, body);
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data as Record<string, any> & { id: string };
}

export async function patchPost(t: TestApp, creator: TestCreator, id: string, body: Record<string, unknown>) {
  return t.app.inject({ method: 'PATCH', url: `/api/v1/posts/${id}`, headers: creator.headers, payload: body });
}

export async function creatorPost(t: TestApp, creator: TestCreator, id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/posts/${id}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
}

/** A member request to `/api/v1/member${url}`. */
export function asMember(t: TestApp, member: TestMember, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) {
  return t.app.inject({ method, url: `/api/v1/member${url}`, headers: member.headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

/** The member's feed page; expects 200. */
export async function feedOf(t: TestApp, member: TestMember, query = '') {
  const res = await asMember(t, member, 'GET', `/feed${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { data: Array<Record<string, any>>; pagination: Record<string, number> };
}

/** The member's view of one post; expects 200. */
export async function readPost(t: TestApp, member: TestMember, id: string) {
  const res = await asMember(t, member, 'GET', `/posts/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
}

// ---- Paywall fixtures (src/modules/posts/paywall.test.ts, paywall-leak.test.ts). ----

/** Every field of a locked post: an allow-list, so a field added to it is added here on purpose. */
export const LOCKED_POST_KEYS = [
  'comments_count',
  'community_id',
  'created_at',
  'has_poll',
  'id',
  'kudos_count',
  'locked',
  'media_count',
  'pinned',
  'preview',
  'tier_min_id',
  'updated_at',
  'upgrade_billing_period',
  'upgrade_price_cents',
  'upgrade_tier_id',
  'upgrade_tier_name',
  'views_count',
];

/**
 * The post as the member sees it, read both ways: in the feed of its community
 * (`?community_id=`) and on its own page (`GET /posts/:id`). Both must show it, agree on
 * `locked`, and a locked one must carry exactly LOCKED_POST_KEYS, a readable one its content.
 * Returns the page's view.
 */
export async function seenBy(t: TestApp, member: TestMember, communityId: string, postId: string) {
  const item = (await feedOf(t, member, `?community_id=${communityId}&limit=100`)).data.find((p) => p.id === postId);
  const post = await readPost(t, member, postId);
  expect(item, 'the post should be in its community feed').toBeDefined();
  expect(item!.locked, 'the feed and the post page should agree on locked').toBe(post.locked);
  for (const view of [item!, post]) {
    if (view.locked) expect(Object.keys(view).sort()).toEqual(LOCKED_POST_KEYS);
    else expect(view).toHaveProperty('content');
  }
  return post;
}

/** Whether the post is locked for the member, on the feed and on its page alike (seenBy). */
export async function lockedFor(t: TestApp, member: TestMember, communityId: string, postId: string): Promise<boolean> {
  return (await seenBy(t, member, communityId, postId)).locked as boolean;
}

/**
 * `n` members with a subscription of `status` to `place` (mirrored) and a token minted
 * directly: a crowd of readers without n sign-ups (each one a deliberate password hash).
 */
export async function crowd(t: TestApp, creator: TestCreator, place: Place, n: number, status: SubscriptionStatus = 'active'): Promise<TestMember[]> {
  const members: TestMember[] = [];
  for (let i = 0; i < n; i++) {
    const member = await mintMember(t, { name: `Member ${i} Silva` });
    await mirrorSubscription(t, creator, { ...place, memberId: member.id }, { status });
    members.push(member);
  }
  return members;
}
