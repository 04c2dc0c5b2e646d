import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCreator, createMember, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import {
  addMember,
  addMembersInBulk,
  catalogExercises,
  communityWithTiers,
  DAY_MS,
  getMemberRecord,
  idsOf,
  insertLogs,
  listAllMembers,
  listMembers,
  logWorkout,
  mirrorSubscription,
  setLastActive,
  onClock,
  placeIn,
  type Place,
} from '../../../test/members-kit.js';
import type { SubscriptionStatus } from '../../db/types.js';
import { createDirectoryRepo, ESTIMATE_KEEP_MS, type DirectoryFilter } from './directory.repo.js';

/**
 * GET /api/v1/members: filters alone and combined, status (DESIGN §7) over time, search,
 * order, pages, hostile input, engagement and tenant isolation. The service clock is this
 * file's `clock`; every subscription is placed relative to it.
 */
const START = new Date('2026-06-15T12:00:00Z');
let clock = START;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const { ago, join } = onClock(() => t, () => clock);
const STATUSES = ['active', 'trial', 'at_risk', 'churned'] as const;


/** A creator with one community of tiers Basic and Pro; `basic`/`pro` are its two places. */
async function creatorWithCommunity() {
  const creator = await createCreator(t);
  const { communityId, tiers } = await communityWithTiers(t, creator);
  return { creator, communityId, basic: { communityId, tierId: tiers[0]!.id }, pro: { communityId, tierId: tiers[1]!.id } };
}

const place = (creator: TestCreator, tierName?: string) => placeIn(t, creator, tierName);

async function raw(creator: TestCreator, query: Record<string, string> | string) {
  return typeof query === 'string'
    ? t.app.inject({ method: 'GET', url: `/api/v1/members${query}`, headers: creator.headers })
    : t.app.inject({ method: 'GET', url: '/api/v1/members', query, headers: creator.headers });
}

async function ids(creator: TestCreator, query: Record<string, string>) {
  const res = await raw(creator, query);
  expect(res.statusCode, res.body).toBe(200);
  return idsOf(json(res));
}

/** The status each of `memberIds` is listed under (`?status=` each value, plus `extra` filters). */
async function statusesOf(creator: TestCreator, memberIds: string[], extra: Record<string, string> = {}) {
  const found: Record<string, string[]> = Object.fromEntries(memberIds.map((id) => [id, []]));
  for (const status of STATUSES) {
    for (const id of await ids(creator, { ...extra, status, limit: '100' })) found[id]?.push(status);
  }
  return Object.fromEntries(Object.entries(found).map(([id, s]) => [id, s.join('|') || 'none']));
}

async function expect400(creator: TestCreator, query: Record<string, string> | string, field: string) {
  const res = await raw(creator, query);
  expect(res.statusCode, res.body).toBe(400);
  const body = json(res);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe('validation_error');
  expect(body.error.details.map((d: { field: string }) => d.field), res.body).toContain(field);
}

describe('filters', () => {
  it('each filter alone narrows the list to the members it describes', async () => {
    clock = START;
    const { creator, communityId: a, basic, pro } = await creatorWithCommunity();
    const b = await place(creator, 'Ouro');
    const basicActive = await addMember(t, { name: 'Ana Basic' });
    const proTrial = await addMember(t, { name: 'Bia Pro' });
    const bPastDue = await addMember(t, { name: 'Caio Ouro' });
    const basicCanceled = await addMember(t, { name: 'Duda Basic' });
    const bActive = await addMember(t, { name: 'Zé Ninguém' });
    await join(creator, basic, basicActive, 'active', 10);
    await join(creator, pro, proTrial, 'trialing', 5);
    await join(creator, b, bPastDue, 'past_due', 3);
    await join(creator, basic, basicCanceled, 'canceled', 30);
    await join(creator, b, bActive, 'active', 2);
    // Joined: bActive 06-13T12:00, bPastDue 06-12T12:00, proTrial 06-10T12:00, basicActive 06-05T12:00, basicCanceled 05-16T12:00.

    expect(await ids(creator, {})).toEqual([bActive, bPastDue, proTrial, basicActive, basicCanceled]);
    expect(await ids(creator, { community_id: a })).toEqual([proTrial, basicActive, basicCanceled]);
    expect(await ids(creator, { community_id: b.communityId })).toEqual([bActive, bPastDue]);
    expect(await ids(creator, { tier_id: pro.tierId })).toEqual([proTrial]);
    expect(await ids(creator, { tier_id: basic.tierId })).toEqual([basicActive, basicCanceled]);
    expect(await ids(creator, { status: 'active' })).toEqual([bActive, basicActive]);
    expect(await ids(creator, { status: 'trial' })).toEqual([proTrial]);
    expect(await ids(creator, { status: 'at_risk' })).toEqual([bPastDue]);
    expect(await ids(creator, { status: 'churned' })).toEqual([basicCanceled]);
    // A date is that day's 00:00 UTC.
    expect(await ids(creator, { joined_after: '2026-06-10' })).toEqual([bActive, bPastDue, proTrial]);
    expect(await ids(creator, { joined_after: '2026-06-11' })).toEqual([bActive, bPastDue]);
    // A date-time is strictly after, whatever its offset.
    expect(await ids(creator, { joined_after: '2026-06-12T12:00:00Z' })).toEqual([bActive]);
    expect(await ids(creator, { joined_after: '2026-06-12T11:59:59.999Z' })).toEqual([bActive, bPastDue]);
    expect(await ids(creator, { joined_after: '2026-06-12T14:00:00+02:00' })).toEqual([bActive]);
    expect(await ids(creator, { joined_after: '2026-06-12T08:59-03:00' })).toEqual([bActive, bPastDue]);
    expect(await ids(creator, { q: 'ninguem' })).toEqual([bActive]);
    expect(await ids(creator, { q: 'basic' })).toEqual([basicActive, basicCanceled]);
  });

  it('filters combine: every one of them must hold', async () => {
    clock = START;
    const { creator, communityId: a, basic, pro } = await creatorWithCommunity();
    const b = await place(creator, 'Ouro');
    const m1 = await addMember(t, { name: 'Ana Souza' });
    const m2 = await addMember(t, { name: 'Ana Lima' });
    const m3 = await addMember(t, { name: 'Bruno Souza' });
    const m4 = await addMember(t, { name: 'Carla Souza' });
    await join(creator, basic, m1, 'active', 4);
    await join(creator, pro, m2, 'active', 8);
    await join(creator, basic, m3, 'canceled', 20);
    await join(creator, b, m3, 'active', 1);
    await join(creator, b, m4, 'trialing', 6);

    expect(await ids(creator, { community_id: a, status: 'active' })).toEqual([m1, m2]);
    expect(await ids(creator, { community_id: a, status: 'churned' })).toEqual([m3]);
    expect(await ids(creator, { community_id: a, tier_id: basic.tierId, status: 'churned' })).toEqual([m3]);
    expect(await ids(creator, { tier_id: basic.tierId, status: 'active' })).toEqual([m1]);
    expect(await ids(creator, { tier_id: pro.tierId, status: 'trial' })).toEqual([]);
    expect(await ids(creator, { community_id: a, q: 'souza' })).toEqual([m1, m3]);
    expect(await ids(creator, { community_id: a, q: 'souza', status: 'active' })).toEqual([m1]);
    expect(await ids(creator, { q: 'souza', status: 'active' })).toEqual([m1, m3]);
    expect(await ids(creator, { q: 'ana', joined_after: ago(5).toISOString() })).toEqual([m1]);
    // In the community, joined_after reads the join there: m3 joined the creator 20 days ago but b 1 day ago.
    expect(await ids(creator, { community_id: b.communityId, joined_after: ago(2).toISOString() })).toEqual([m3]);
    expect(await ids(creator, { joined_after: ago(2).toISOString() })).toEqual([]);
    expect(await ids(creator, { community_id: b.communityId, status: 'trial', q: 'carla', joined_after: '2026-06-01' })).toEqual([m4]);
    // A tier of another community of the creator, with this community: nobody is in both.
    expect(await ids(creator, { community_id: a, tier_id: b.tierId })).toEqual([]);
    expect(await ids(creator, { community_id: b.communityId, tier_id: b.tierId, sort: 'name' })).toEqual([m3, m4]);
  });

  it('evaluates status within the community named: trial in one, churned in another, active overall', async () => {
    clock = START;
    const creator = await createCreator(t);
    const trialPlace = await place(creator, 'Trial');
    const churnPlace = await place(creator, 'Churn');
    const activePlace = await place(creator, 'Live');
    const member = await addMember(t, { name: 'Três Comunidades' });
    const other = await addMember(t, { name: 'Only Churned' });
    await join(creator, trialPlace, member, 'trialing', 3);
    await join(creator, churnPlace, member, 'canceled', 9);
    await join(creator, activePlace, member, 'active', 2);
    await join(creator, churnPlace, other, 'active', 4);

    expect(await statusesOf(creator, [member, other])).toEqual({ [member]: 'active', [other]: 'active' });
    expect(await statusesOf(creator, [member], { community_id: trialPlace.communityId })).toEqual({ [member]: 'trial' });
    expect(await statusesOf(creator, [member, other], { community_id: churnPlace.communityId })).toEqual({ [member]: 'churned', [other]: 'active' });
    expect(await statusesOf(creator, [member], { community_id: activePlace.communityId })).toEqual({ [member]: 'active' });
    // A tier names its community as well.
    expect(await statusesOf(creator, [member], { tier_id: trialPlace.tierId })).toEqual({ [member]: 'trial' });
    expect(await statusesOf(creator, [member], { tier_id: churnPlace.tierId })).toEqual({ [member]: 'churned' });
    // The member record's status is the creator-wide one.
    expect(json(await getMemberRecord(t, creator, member)).data.status).toBe('active');
  });

  it('lists a member whose subscription moved to another tier under the tier it is in now, once per community', async () => {
    clock = START;
    const { creator, communityId, basic, pro } = await creatorWithCommunity();
    const mover = await addMember(t, { name: 'Troca Tier' });
    await join(creator, basic, mover, 'canceled', 20);
    await join(creator, pro, mover, 'active', 3);

    expect(await ids(creator, { tier_id: pro.tierId })).toEqual([mover]);
    expect(await ids(creator, { tier_id: basic.tierId })).toEqual([]);
    const [row] = (await listMembers(t, creator)).data;
    // One entry for the community: the subscription that counts now, joined when the member first came.
    expect(row!.subscriptions).toEqual([{ community_id: communityId, tier_id: pro.tierId, tier_name: 'Pro', status: 'active', joined_at: ago(20).toISOString() }]);
  });

  it("shows a subscription's status as it is now and its tier under the name it has now, also when the member's state and tier stay", async () => {
    clock = START;
    const { creator, communityId, basic } = await creatorWithCommunity();
    const member = await addMember(t);
    const id = await join(creator, basic, member, 'incomplete', 2);
    // Churned before and after: only the subscription's own status moves.
    await mirrorSubscription(t, creator, { ...basic, memberId: member, id }, { status: 'incomplete_expired', createdAt: ago(2) });
    const renamed = await t.app.inject({ method: 'PATCH', url: `/api/v1/tiers/${basic.tierId}`, headers: creator.headers, payload: { name: 'Básico' } });
    expect(renamed.statusCode, renamed.body).toBe(200);

    const expected = [{ community_id: communityId, tier_id: basic.tierId, tier_name: 'Básico', status: 'incomplete_expired', joined_at: ago(2).toISOString() }];
    expect((await listMembers(t, creator)).data[0]!.subscriptions).toEqual(expected);
    expect((await listMembers(t, creator, `?status=churned&tier_id=${basic.tierId}`)).data[0]!.subscriptions).toEqual(expected);
    expect(json(await getMemberRecord(t, creator, member)).data.subscriptions[0]).toMatchObject({ tier_name: 'Básico' });
  });
});

describe('status (DESIGN §7)', () => {
  it('applies the first rule that holds: churned, trial, at risk, active', async () => {
    clock = START;
    const creator = await createCreator(t);
    const p1 = await place(creator, 'One');
    const p2 = await place(creator, 'Two');
    const cases: Array<[string, Array<[Place, SubscriptionStatus, boolean?]>, string]> = [
      ['trialing + past_due', [[p1, 'trialing'], [p2, 'past_due']], 'trial'],
      ['trialing + past_due in one community', [[p1, 'trialing'], [p1, 'past_due']], 'trial'],
      ['active + past_due', [[p1, 'active'], [p2, 'past_due']], 'at_risk'],
      ['active + past_due in one community', [[p1, 'active'], [p1, 'past_due']], 'at_risk'],
      ['active set to cancel at period end', [[p1, 'active', true]], 'at_risk'],
      ['active + active set to cancel', [[p1, 'active'], [p2, 'active', true]], 'at_risk'],
      ['past_due alone', [[p1, 'past_due']], 'at_risk'],
      ['all canceled', [[p1, 'canceled'], [p2, 'canceled']], 'churned'],
      ['trialing + active', [[p1, 'trialing'], [p2, 'active']], 'active'],
      ['trialing + canceled', [[p1, 'canceled'], [p2, 'trialing']], 'trial'],
      ['active + canceled', [[p1, 'canceled'], [p1, 'active']], 'active'],
      ['trialing + active + past_due', [[p1, 'trialing'], [p2, 'active'], [p2, 'past_due']], 'at_risk'],
    ];
    const expected: Record<string, string> = {};
    const names: Record<string, string> = {};
    for (const [name, subs, status] of cases) {
      const member = await addMember(t, { name });
      for (const [at, s, cancel] of subs) await join(creator, at, member, s, 2, cancel ?? false);
      expected[member] = status;
      names[member] = name;
    }
    const got = await statusesOf(creator, Object.keys(expected));
    const label = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([id, s]) => [names[id], s]));
    expect(label(got)).toEqual(label(expected));
    for (const [member, status] of Object.entries(expected)) {
      expect(json(await getMemberRecord(t, creator, member)).data.status, names[member]).toBe(status);
    }
  });

  it('follows a subscription through its life: trial, active, set to cancel, canceled', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const member = await addMember(t);
    const id = await join(creator, basic, member, 'trialing', 1);
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'trial' });
    await mirrorSubscription(t, creator, { ...basic, memberId: member, id }, { status: 'active' });
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'active' });
    await mirrorSubscription(t, creator, { ...basic, memberId: member, id }, { status: 'active', cancelAtPeriodEnd: true });
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'at_risk' });
    await mirrorSubscription(t, creator, { ...basic, memberId: member, id }, { status: 'active', cancelAtPeriodEnd: false });
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'active' });
    await mirrorSubscription(t, creator, { ...basic, memberId: member, id }, { status: 'past_due' });
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'at_risk' });
    await mirrorSubscription(t, creator, { ...basic, memberId: member, id }, { status: 'canceled' });
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'churned' });
  });

  it('makes an active member at risk once 14 full days pass without activity since joining', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const member = await addMember(t);
    await join(creator, basic, member, 'active', 14);
    // Exactly 14 days: not yet.
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'active' });
    clock = new Date(START.getTime() + 1);
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'at_risk' });
    expect(json(await getMemberRecord(t, creator, member)).data.status).toBe('at_risk');
    // Within the community too (activity is creator-wide, the community's own state is active).
    expect(await statusesOf(creator, [member], { community_id: basic.communityId })).toEqual({ [member]: 'at_risk' });
    expect(await statusesOf(creator, [member], { tier_id: basic.tierId })).toEqual({ [member]: 'at_risk' });
  });

  it('counts inactivity from the last activity when it is later than the join', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const member = await addMember(t);
    await join(creator, basic, member, 'active', 40);
    await setLastActive(t, creator.id, member, ago(13));
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'active' });
    clock = new Date(START.getTime() + DAY_MS + 1000);
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'at_risk' });
  });

  it('counts inactivity from the latest join: a member who rejoins after churning is active again', async () => {
    clock = START;
    const creator = await createCreator(t);
    const first = await place(creator, 'First');
    const second = await place(creator, 'Second');
    const member = await addMember(t);
    await join(creator, first, member, 'canceled', 60);
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'churned' });
    await join(creator, second, member, 'active', 3);
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'active' });
    // The latest join, not the first, starts the quiet period.
    clock = new Date(START.getTime() + 11 * DAY_MS);
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'active' });
    clock = new Date(START.getTime() + 11 * DAY_MS + 1000);
    expect(await statusesOf(creator, [member])).toEqual({ [member]: 'at_risk' });
  });

  it('never makes a churned or trialing member at risk for inactivity, and a past-due one is at risk however active', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const churned = await addMember(t, { name: 'Churned' });
    const trial = await addMember(t, { name: 'Trial' });
    const pastDue = await addMember(t, { name: 'Past due' });
    await join(creator, basic, churned, 'canceled', 90);
    await join(creator, basic, trial, 'trialing', 30);
    await join(creator, basic, pastDue, 'past_due', 1);
    await setLastActive(t, creator.id, pastDue, clock);
    expect(await statusesOf(creator, [churned, trial, pastDue])).toEqual({ [churned]: 'churned', [trial]: 'trial', [pastDue]: 'at_risk' });
  });

  it('brings an at-risk member back to active when they log a workout, and only a workout in this creator counts', async () => {
    clock = START;
    const { creator, communityId, basic } = await creatorWithCommunity();
    const other = await createCreator(t);
    const elsewhere = await place(other, 'Elsewhere');
    const member = await createMember(t);
    await join(creator, basic, member.id, 'active', 20);
    await mirrorSubscription(t, other, { ...elsewhere, memberId: member.id }, { status: 'active', createdAt: ago(20) });
    expect(await statusesOf(creator, [member.id])).toEqual({ [member.id]: 'at_risk' });

    // A personal log and a log in another creator's community leave this creator's status alone.
    await logWorkout(t, member, { performedAt: clock });
    await logWorkout(t, member, { communityId: elsewhere.communityId, performedAt: clock });
    expect(await statusesOf(creator, [member.id])).toEqual({ [member.id]: 'at_risk' });
    expect(await statusesOf(other, [member.id])).toEqual({ [member.id]: 'active' });

    clock = new Date(START.getTime() + 60_000);
    await logWorkout(t, member, { communityId, performedAt: ago(3) });
    expect(await statusesOf(creator, [member.id])).toEqual({ [member.id]: 'active' });
    const [row] = (await listMembers(t, creator)).data;
    // Activity is when it was recorded (the service clock), not when the workout was done.
    expect(row!.engagement.last_active_at).toBe(clock.toISOString());
    clock = new Date(clock.getTime() + 14 * DAY_MS + 1000);
    expect(await statusesOf(creator, [member.id])).toEqual({ [member.id]: 'at_risk' });
  });
});

describe('order', () => {
  /** `fold` as the contract describes it: case and accents ignored. */
  const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
  const byKeyThenId = <T>(rows: T[], key: (r: T) => string, id: (r: T) => string, desc: boolean) =>
    [...rows].sort((x, y) => {
      const c = key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : id(x) < id(y) ? -1 : id(x) > id(y) ? 1 : 0;
      return desc ? -c : c;
    });

  it('sorts by name ignoring case and accents, both ways, ties by id in the same direction', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const names = ['bruno', 'Ágata', 'Élise', 'alvaro', 'Bruno', 'eduardo', 'BRUNO', 'Zoë'];
    const members: Array<{ id: string; name: string }> = [];
    for (const [i, name] of names.entries()) {
      const id = await addMember(t, { name });
      await join(creator, basic, id, 'active', i + 1);
      members.push({ id, name });
    }
    const asc = byKeyThenId(members, (m) => fold(m.name), (m) => m.id, false).map((m) => m.id);
    expect(await ids(creator, { sort: 'name' })).toEqual(asc);
    expect(await ids(creator, { sort: '-name' })).toEqual([...asc].reverse());
    expect((await listMembers(t, creator, '?sort=name')).data.map((m) => m.name).slice(0, 2)).toEqual(['Ágata', 'alvaro']);
    // Pages of the same order, however small.
    const paged: string[] = [];
    for (let page = 1; page <= 3; page++) paged.push(...(await ids(creator, { sort: 'name', limit: '3', page: String(page) })));
    expect(paged).toEqual(asc);
  });

  it('sorts by joined_at both ways, ties by id in the same direction, and -joined_at by default', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const members: Array<{ id: string; joined: number }> = [];
    for (const days of [5, 2, 5, 9, 2, 5]) {
      const id = await addMember(t);
      await join(creator, basic, id, 'active', days);
      members.push({ id, joined: ago(days).getTime() });
    }
    const key = (m: { joined: number }) => String(m.joined).padStart(15, '0');
    const asc = byKeyThenId(members, key, (m) => m.id, false).map((m) => m.id);
    expect(await ids(creator, { sort: 'joined_at' })).toEqual(asc);
    expect(await ids(creator, { sort: '-joined_at' })).toEqual([...asc].reverse());
    expect(await ids(creator, {})).toEqual([...asc].reverse());
    const paged: string[] = [];
    for (let page = 1; page <= 3; page++) paged.push(...(await ids(creator, { sort: 'joined_at', limit: '2', page: String(page) })));
    expect(paged).toEqual(asc);
  });

  it('sorts by joined_at in the community named by its join there, not the first join to the creator', async () => {
    clock = START;
    const creator = await createCreator(t);
    const x = await place(creator, 'X');
    const y = await place(creator, 'Y');
    const early = await addMember(t, { name: 'Early to X, late to Y' });
    const middle = await addMember(t, { name: 'Middle' });
    await join(creator, x, early, 'active', 30);
    await join(creator, y, early, 'active', 2);
    await join(creator, y, middle, 'active', 10);
    expect(await ids(creator, { sort: 'joined_at' })).toEqual([early, middle]);
    expect(await ids(creator, { sort: 'joined_at', community_id: y.communityId })).toEqual([middle, early]);
    expect(await ids(creator, { community_id: y.communityId })).toEqual([early, middle]);
    expect(await ids(creator, { sort: '-joined_at', tier_id: y.tierId })).toEqual([early, middle]);
  });

  it('sorts by last_active_at both ways: never-active members last descending and first ascending, ties by id', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const members: Array<{ id: string; at: Date | null }> = [];
    for (const at of [ago(1), null, ago(3), ago(1), null, ago(2), null]) {
      const id = await addMember(t);
      await join(creator, basic, id, 'active', 5);
      await setLastActive(t, creator.id, id, at);
      members.push({ id, at });
    }
    const dated = members.filter((m) => m.at);
    const never = members.filter((m) => !m.at);
    const key = (m: { at: Date | null }) => String(m.at!.getTime()).padStart(15, '0');
    const ascDated = byKeyThenId(dated, key, (m) => m.id, false).map((m) => m.id);
    const ascNever = byKeyThenId(never, () => '', (m) => m.id, false).map((m) => m.id);
    expect(await ids(creator, { sort: 'last_active_at' })).toEqual([...ascNever, ...ascDated]);
    expect(await ids(creator, { sort: '-last_active_at' })).toEqual([...[...ascDated].reverse(), ...[...ascNever].reverse()]);
    // Page edges falling among the dated and the never-active ones.
    for (const sort of ['last_active_at', '-last_active_at']) {
      const paged: string[] = [];
      for (let page = 1; page <= 4; page++) paged.push(...(await ids(creator, { sort, limit: '2', page: String(page) })));
      expect(paged, sort).toEqual(await ids(creator, { sort }));
    }
    // Scoped to a community, the same order.
    expect(await ids(creator, { sort: 'last_active_at', community_id: basic.communityId })).toEqual([...ascNever, ...ascDated]);
    expect(await ids(creator, { sort: '-last_active_at', status: 'active' })).toEqual([...[...ascDated].reverse(), ...[...ascNever].reverse()]);
  });
});

describe('pages', () => {
  it('pages through the list with exact totals and page counts, and a page past the end is empty', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await addMember(t);
      await join(creator, basic, id, 'active', i + 1);
      created.push(id);
    }
    const all = await ids(creator, { limit: '100' });
    expect(all).toEqual(created);
    const pages: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await listMembers(t, creator, `?limit=2&page=${page}`);
      expect(res.pagination).toEqual({ page, limit: 2, total: 5, pages: 3, total_is_estimate: false });
      expect(res.data.length).toBe(page < 3 ? 2 : 1);
      pages.push(...idsOf(res));
    }
    expect(pages).toEqual(all);
    const past = await listMembers(t, creator, '?limit=2&page=4');
    expect(past.data).toEqual([]);
    expect(past.pagination).toEqual({ page: 4, limit: 2, total: 5, pages: 3, total_is_estimate: false });
    const far = await listMembers(t, creator, '?limit=100&page=10000');
    expect(far.data).toEqual([]);
    expect(far.pagination).toEqual({ page: 10000, limit: 100, total: 5, pages: 1, total_is_estimate: false });
    expect((await listMembers(t, creator, '?limit=5')).pagination.pages).toBe(1);
    expect((await listMembers(t, creator, '?limit=1')).pagination.pages).toBe(5);
    expect((await listMembers(t, creator)).pagination).toEqual({ page: 1, limit: 20, total: 5, pages: 1, total_is_estimate: false });
    // Totals follow the filters.
    expect((await listMembers(t, creator, '?status=churned')).pagination).toEqual({ page: 1, limit: 20, total: 0, pages: 0, total_is_estimate: false });
  });

  it('a creator with no members gets an empty first page with total 0 and 0 pages', async () => {
    const creator = await createCreator(t);
    expect(await listMembers(t, creator)).toEqual({ success: true, data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0, total_is_estimate: false } });
  });

  it('refuses page and limit out of range with a 400 naming the parameter', async () => {
    const creator = await createCreator(t);
    await expect400(creator, '?limit=101', 'limit');
    await expect400(creator, '?limit=0', 'limit');
    await expect400(creator, '?limit=-1', 'limit');
    await expect400(creator, '?limit=abc', 'limit');
    await expect400(creator, '?limit=2.5', 'limit');
    await expect400(creator, '?page=0', 'page');
    await expect400(creator, '?page=10001', 'page');
    await expect400(creator, '?page=1e30', 'page');
    await expect400(creator, '?page=', 'page');
    expect((await raw(creator, '?page=10000&limit=100')).statusCode).toBe(200);
  });
});

describe('query validation', () => {
  it('refuses an unknown status or sort with a 400 naming the field', async () => {
    const creator = await createCreator(t);
    await expect400(creator, { status: 'vip' }, 'status');
    await expect400(creator, { status: 'ACTIVE' }, 'status');
    await expect400(creator, { status: 'past_due' }, 'status');
    await expect400(creator, { sort: 'age' }, 'sort');
    await expect400(creator, { sort: '+name' }, 'sort');
    await expect400(creator, { sort: '-email' }, 'sort');
    await expect400(creator, '?status=active&status=churned', 'status');
  });

  it('refuses joined_after that is not a real date or date-time with a 400 naming joined_after', async () => {
    const creator = await createCreator(t);
    for (const bad of ['2026-02-30', '2026-02-29', '2026-13-01', '2026-00-10', '2026-06-31', '2026-06-01T25:00:00Z', '2026-06-01T12:61:00Z', '2026-06-01T12:00:00+25:00', 'yesterday', '2026-6-1', '2026-06-01T12:00:00', '1718452800', '']) {
      await expect400(creator, { joined_after: bad }, 'joined_after');
    }
    for (const good of ['2028-02-29', '2026-06-01T12:00Z', '2026-06-01T12:00:00.123456789Z', '2026-06-01T23:59:59-03:00', '1970-01-01']) {
      const res = await raw(creator, { joined_after: good });
      expect(res.statusCode, `${good}: ${res.body}`).toBe(200);
    }
  });

  it('answers every joined_after the pattern admits with 200 or 400, never a server error', async () => {
    const creator = await createCreator(t);
    const failures: string[] = [];
    for (const edge of ['0000-01-01', '0001-01-01', '9999-12-31', '9999-12-31T23:59:59-14:00', '0000-01-01T00:00:00+14:00', '0001-01-01T00:00:00+14:00', '2026-06-01T24:00:00Z', '2026-06-01T23:59:60Z']) {
      const res = await raw(creator, { joined_after: edge });
      if (res.statusCode !== 200 && res.statusCode !== 400) failures.push(`${edge} → ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });

  it('refuses unknown query parameters and malformed ids with a 400 naming them', async () => {
    const creator = await createCreator(t);
    await expect400(creator, { foo: '1' }, 'foo');
    await expect400(creator, { member_id: '0190a0b0-0000-7000-8000-000000000000' }, 'member_id');
    await expect400(creator, { community_id: 'not-a-uuid' }, 'community_id');
    await expect400(creator, { tier_id: '123' }, 'tier_id');
    await expect400(creator, { q: '' }, 'q');
  });
});

describe('search', () => {
  it('finds a name or an e-mail by any part of it, ignoring case and accents', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const joao = await addMember(t, { name: 'João Conceição' });
    const maria = await addMember(t, { name: 'Maria Silva', email: `Maria.Silva+tribes-${Date.now()}@Example.COM` });
    const plain = await addMember(t, { name: 'Jose Conceicao' });
    const strasse = await addMember(t, { name: 'Jürgen Straße' });
    const nordic = await addMember(t, { name: 'Łukasz Ødegård' });
    const cyrillic = await addMember(t, { name: 'Светлана Ωmega' });
    for (const [i, m] of [joao, maria, plain, strasse, nordic, cyrillic].entries()) await join(creator, basic, m, 'active', i + 1);
    const q = (text: string) => ids(creator, { q: text });

    expect(await q('joao')).toEqual([joao]);
    expect(await q('JOÃO')).toEqual([joao]);
    expect(await q('SILVA')).toEqual([maria]);
    expect(await q('ria sil')).toEqual([maria]);
    expect(await q('silva+tribes')).toEqual([maria]);
    expect(await q('@example.com')).toEqual([joao, maria, plain, strasse, nordic, cyrillic]);
    expect(await q('conceicao')).toEqual([joao, plain]);
    expect(await q('Conceição')).toEqual([joao, plain]);
    expect(await q('strasse')).toEqual([strasse]);
    expect(await q('STRASSE')).toEqual([strasse]);
    expect(await q('jurgen')).toEqual([strasse]);
    expect(await q('lukasz odegard')).toEqual([nordic]);
    expect(await q('СВЕТЛАНА ωMEGA')).toEqual([cyrillic]);
    expect(await q('nobody-here')).toEqual([]);
  });

  it("shows and finds a member by their new name, e-mail and avatar once their profile changes, for every creator they belong to", async () => {
    clock = START;
    const first = await creatorWithCommunity();
    const second = await creatorWithCommunity();
    const member = await addMember(t, { name: 'Paula Antiga', email: `antiga-${Date.now()}@example.com` });
    await join(first.creator, first.basic, member, 'active', 3);
    await join(second.creator, second.pro, member, 'canceled', 9);
    const email = `nova-${Date.now()}@example.com`;
    await sql`update members set name = 'Paula Nova', email = ${email}, avatar_url = 'https://cdn.example.com/p.png' where id = ${member}`.execute(t.database.db);

    for (const { creator } of [first, second]) {
      const [row] = (await listMembers(t, creator)).data;
      expect(row).toMatchObject({ id: member, name: 'Paula Nova', email, avatar_url: 'https://cdn.example.com/p.png' });
      expect(await ids(creator, { q: 'nova' })).toEqual([member]);
      expect(await ids(creator, { q: 'antiga' })).toEqual([]);
      expect(idsOf(json(await raw(creator, { sort: 'name' })))).toEqual([member]);
    }
  });

  it('finds a name stored with decomposed accents (NFD, as macOS keyboards send it) by its plain spelling', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const decomposed = await addMember(t, { name: 'Jose\u0301 Conceic\u0327a\u0303o' });
    await join(creator, basic, decomposed, 'active', 1);
    expect(await ids(creator, { q: 'jose' })).toEqual([decomposed]);
    expect(await ids(creator, { q: 'josé' })).toEqual([decomposed]);
    expect(await ids(creator, { q: 'conceicao' })).toEqual([decomposed]);
  });

  it('matches within the name or within the e-mail, never across the two', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const member = await addMember(t, { name: 'Maria Silva', email: `maria-${Date.now()}@example.com` });
    await join(creator, basic, member, 'active', 1);
    expect(await ids(creator, { q: 'silva' })).toEqual([member]);
    expect(await ids(creator, { q: 'silva maria' })).toEqual([]);
    // A line break (what joins the two in the stored search text) is a control character: refused.
    await expect400(creator, { q: 'silva\nmaria' }, 'q');
    await expect400(creator, { q: 'Silva\nmaria-' }, 'q');
  });

  it('takes quotes, %, _, backslashes, SQL and unicode as plain text', async () => {
    clock = START;
    const { creator, basic } = await creatorWithCommunity();
    const names = ["O'Brien", 'Say "hi"', 'back\\slash', '100% Fit', '1000 Fit', 'a_b', 'ab', 'Ana 💪', "'; drop table members; --", '日本 太郎'];
    const m: Record<string, string> = {};
    for (const [i, name] of names.entries()) {
      m[name] = await addMember(t, { name, email: `hostile-${i}-${Date.now()}@example.com` });
      await join(creator, basic, m[name]!, 'active', 20 - i);
    }
    const q = async (text: string) => (await ids(creator, { q: text, sort: 'name' })).map((id) => names.find((n) => m[n] === id));
    expect(await q("o'brien")).toEqual(["O'Brien"]);
    expect(await q("'")).toEqual(["'; drop table members; --", "O'Brien"]);
    expect(await q('"hi"')).toEqual(['Say "hi"']);
    expect(await q('"')).toEqual(['Say "hi"']);
    expect(await q('\\')).toEqual(['back\\slash']);
    expect(await q('k\\s')).toEqual(['back\\slash']);
    expect(await q('\\\\')).toEqual([]);
    expect(await q('100%')).toEqual(['100% Fit']);
    expect(await q('%')).toEqual(['100% Fit']);
    expect(await q('0%')).toEqual(['100% Fit']);
    expect(await q('%%')).toEqual([]);
    expect(await q('_b')).toEqual(['a_b']);
    expect(await q('_')).toEqual(['a_b']);
    expect(await q('a_')).toEqual(['a_b']);
    expect(await q('ab')).toEqual(["'; drop table members; --", 'ab']);
    expect(await q('💪')).toEqual(['Ana 💪']);
    expect(await q('太郎')).toEqual(['日本 太郎']);
    expect(await q("'; drop table members; --")).toEqual(["'; drop table members; --"]);
    expect(await q('.*')).toEqual([]);
    expect(await q('[a-z]')).toEqual([]);
    expect(await q('$1')).toEqual([]);
    // The members are all still there.
    expect((await listMembers(t, creator, '?limit=100')).pagination.total).toBe(names.length);
  });

  it('answers hostile search text with 200 or a 400 naming q, never a server error', async () => {
    const creator = await createCreator(t);
    const accepted = ['x'.repeat(200), '💪'.repeat(200), "'; drop table members; --", "\\'", '%_%_\\', '\u202e\u200b', '\ufeff', 'ǅ', ' ', ')', "') or 1=1 --", '\u00a0', 'İ', 'ﬁ'];
    for (const text of accepted) {
      const res = await raw(creator, { q: text });
      expect(res.statusCode, `${JSON.stringify(text)}: ${res.body}`).toBe(200);
      expect(json(res).data).toEqual([]);
    }
    // Too long, or holding a control character (no name or e-mail holds one).
    for (const text of ['x'.repeat(201), 'x'.repeat(10_240), 'é'.repeat(10_240), 'a\u0000b', '\t', '\r\n', 'a\u007fb']) {
      await expect400(creator, { q: text }, 'q');
    }
    // Two values, or a nested object, for one parameter.
    await expect400(creator, '?q=a&q=b', 'q');
    for (const url of ['?q[]=a', '?q[a]=b', '?q=%ZZ', '?q=%ED%A0%80']) {
      const res = await raw(creator, url);
      expect([200, 400], `${url}: ${res.statusCode} ${res.body}`).toContain(res.statusCode);
    }
  });
});

describe('engagement', () => {
  it('counts the workouts of the last 30 days in this creator’s communities only', async () => {
    clock = START;
    const creator = await createCreator(t);
    const a1 = await place(creator, 'A1');
    const a2 = await place(creator, 'A2');
    const other = await createCreator(t);
    const b = await place(other, 'B');
    const member = await createMember(t);
    await join(creator, a1, member.id, 'active', 60);
    await join(creator, a2, member.id, 'active', 60);
    await mirrorSubscription(t, other, { ...b, memberId: member.id }, { status: 'active', createdAt: ago(60) });
    const [exercise] = await catalogExercises(t, 1);
    const log = (communityId: string | undefined, performedAt: Date) => logWorkout(t, member, { ...(communityId ? { communityId } : {}), performedAt }, exercise);

    await log(a1.communityId, ago(31)); // too old
    await log(a1.communityId, new Date(ago(30).getTime() + 60_000)); // just inside
    await log(a2.communityId, ago(29));
    await log(a1.communityId, ago(1));
    await log(a1.communityId, ago(1)); // two the same day both count
    await log(b.communityId, ago(2)); // another creator's
    await log(undefined, ago(1)); // personal

    const engagement = async (c: TestCreator) => (await listMembers(t, c)).data[0]!.engagement;
    expect((await engagement(creator)).workouts_completed_30d).toBe(4);
    expect((await engagement(other)).workouts_completed_30d).toBe(1);
    // Moving the clock two days lets the 29-day and the 30-day ones fall out of the window.
    clock = new Date(START.getTime() + 2 * DAY_MS);
    expect((await engagement(creator)).workouts_completed_30d).toBe(2);
    clock = new Date(START.getTime() + 40 * DAY_MS);
    expect((await engagement(creator)).workouts_completed_30d).toBe(0);
  });

  it('counts the streak in consecutive UTC days ending today or yesterday', async () => {
    clock = new Date('2026-06-15T00:30:00Z');
    const { creator, communityId, basic } = await creatorWithCommunity();
    const member = await createMember(t);
    await join(creator, basic, member.id, 'active', 30);
    const [exercise] = await catalogExercises(t, 1);
    const streak = async () => (await listMembers(t, creator)).data[0]!.engagement.streak_days as number;
    const log = (at: string) => logWorkout(t, member, { communityId, performedAt: at }, exercise);

    expect(await streak()).toBe(0);
    await log('2026-06-10T10:00:00Z');
    await log('2026-06-12T23:59:59Z');
    await log('2026-06-13T00:00:00Z');
    await log('2026-06-13T18:00:00Z');
    await log('2026-06-14T23:50:00Z'); // yesterday in UTC, 40 minutes ago
    expect(await streak()).toBe(3);
    await log('2026-06-15T00:10:00Z');
    expect(await streak()).toBe(4);
    // Tomorrow the run still ends yesterday; the day after, it is over.
    clock = new Date('2026-06-16T23:59:00Z');
    expect(await streak()).toBe(4);
    clock = new Date('2026-06-17T00:00:00Z');
    expect(await streak()).toBe(0);
    clock = new Date('2026-06-17T10:00:00Z');
    expect(await streak()).toBe(0);
  });

  it('counts a streak longer than a month to its first day, however much came before its gap', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const { creator, communityId, basic } = await creatorWithCommunity();
    const member = await createMember(t);
    await join(creator, basic, member.id, 'active', 200);
    const [exercise] = await catalogExercises(t, 1);
    const dayAt = (daysAgo: number) => new Date(Date.parse('2026-06-15T08:00:00Z') - daysAgo * 86_400_000).toISOString();
    // 45 days in a row through today, a gap, and an older run of 5.
    for (let d = 0; d < 45; d++) await logWorkout(t, member, { communityId, performedAt: dayAt(d) }, exercise);
    for (let d = 46; d < 51; d++) await logWorkout(t, member, { communityId, performedAt: dayAt(d) }, exercise);
    expect((await listMembers(t, creator)).data[0]!.engagement.streak_days).toBe(45);
  });

  it('keeps the streak true when a log fills a gap, comes before it, repeats a day, is deleted, or is written straight into the table', async () => {
    clock = new Date('2026-06-15T12:00:00Z');
    const { creator, communityId, basic } = await creatorWithCommunity();
    const member = await createMember(t);
    await join(creator, basic, member.id, 'active', 60);
    const [exercise] = await catalogExercises(t, 1);
    const dayAt = (daysAgo: number) => new Date(Date.parse('2026-06-15T08:00:00Z') - daysAgo * 86_400_000);
    const log = async (daysAgo: number) => (await logWorkout(t, member, { communityId, performedAt: dayAt(daysAgo) }, exercise)).id;
    const streak = async () => (await listMembers(t, creator)).data[0]!.engagement.streak_days as number;
    const remove = async (id: string) => {
      const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/member/workout-logs/${id}`, headers: member.headers });
      expect(res.statusCode, res.body).toBe(200);
    };

    for (const d of [6, 5, 4, 2, 1]) await log(d);
    expect(await streak()).toBe(2);
    await log(10); // long before the run: nothing joins it
    await log(1); // a second log of a day in the run
    expect(await streak()).toBe(2);
    const gap = await log(3); // fills the gap: the two runs are one
    expect(await streak()).toBe(6);
    const today = await log(0);
    expect(await streak()).toBe(7);
    await remove(gap); // splits the run again
    expect(await streak()).toBe(3);
    await remove(today); // the run ends yesterday: still counts
    expect(await streak()).toBe(2);
    // Another writer (an import, the scale seeders) goes through the same triggers.
    await insertLogs(t, member.id, [{ creatorId: creator.id, communityId, performedAt: dayAt(3) }, { creatorId: creator.id, communityId, performedAt: dayAt(0) }]);
    expect(await streak()).toBe(7);
  });

  it('gives a streak of 0 when the last workout was two days ago, and counts only this creator’s logs', async () => {
    clock = START;
    const creator = await createCreator(t);
    const mine = await place(creator, 'Mine');
    const other = await createCreator(t);
    const theirs = await place(other, 'Theirs');
    const member = await createMember(t);
    await join(creator, mine, member.id, 'active', 30);
    await mirrorSubscription(t, other, { ...theirs, memberId: member.id }, { status: 'active', createdAt: ago(30) });
    const [exercise] = await catalogExercises(t, 1);
    const log = (communityId: string | undefined, daysAgo: number) => logWorkout(t, member, { ...(communityId ? { communityId } : {}), performedAt: ago(daysAgo) }, exercise);
    const streak = async (c: TestCreator) => (await listMembers(t, c)).data[0]!.engagement.streak_days as number;

    await log(mine.communityId, 3);
    await log(mine.communityId, 2);
    expect(await streak(creator)).toBe(0);
    // Yesterday and today only in the other creator's community or in personal logs.
    await log(theirs.communityId, 1);
    await log(undefined, 0);
    expect(await streak(creator)).toBe(0);
    expect(await streak(other)).toBe(1);
    await log(mine.communityId, 1);
    expect(await streak(creator)).toBe(3);
  });

  it('records last activity when a workout is logged, at most once an hour, and never from personal or other creators’ logs', async () => {
    clock = START;
    const creator = await createCreator(t);
    const mine = await place(creator, 'Mine');
    const other = await createCreator(t);
    const theirs = await place(other, 'Theirs');
    const member = await createMember(t);
    await join(creator, mine, member.id, 'active', 30);
    await mirrorSubscription(t, other, { ...theirs, memberId: member.id }, { status: 'active', createdAt: ago(30) });
    const [exercise] = await catalogExercises(t, 1);
    const lastActive = async (c: TestCreator) => (await listMembers(t, c)).data[0]!.engagement.last_active_at as string | null;

    expect(await lastActive(creator)).toBeNull();
    await logWorkout(t, member, { performedAt: ago(0) }, exercise);
    await logWorkout(t, member, { communityId: theirs.communityId, performedAt: ago(0) }, exercise);
    expect(await lastActive(creator)).toBeNull();
    expect(await lastActive(other)).toBe(START.toISOString());

    clock = new Date(START.getTime() + 5 * 60_000);
    await logWorkout(t, member, { communityId: mine.communityId, performedAt: clock }, exercise);
    expect(await lastActive(creator)).toBe(clock.toISOString());
    const first = clock;
    clock = new Date(first.getTime() + 59 * 60_000);
    await logWorkout(t, member, { communityId: mine.communityId, performedAt: clock }, exercise);
    expect(await lastActive(creator)).toBe(first.toISOString());
    clock = new Date(first.getTime() + 61 * 60_000);
    await logWorkout(t, member, { communityId: mine.communityId, performedAt: clock }, exercise);
    expect(await lastActive(creator)).toBe(clock.toISOString());
    // The other creator's stays where their own last log put it.
    expect(await lastActive(other)).toBe(START.toISOString());
  });

  it('never lets a streak depend on the server’s time zone', async () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/Sao_Paulo';
    try {
      clock = START;
      const { creator, communityId, basic } = await creatorWithCommunity();
      const member = await createMember(t);
      await join(creator, basic, member.id, 'active', 30);
      const [exercise] = await catalogExercises(t, 1);
      // Two days before today (UTC): no streak any more.
      await logWorkout(t, member, { communityId, performedAt: '2026-06-13T12:00:00Z' }, exercise);
      expect((await listMembers(t, creator)).data[0]!.engagement.streak_days).toBe(0);
      await logWorkout(t, member, { communityId, performedAt: '2026-06-14T12:00:00Z' }, exercise);
      expect((await listMembers(t, creator)).data[0]!.engagement.streak_days).toBe(2);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});

describe('isolation', () => {
  it('a member of two creators shows each creator only their own subscriptions and activity', async () => {
    clock = START;
    const alpha = await createCreator(t);
    const beta = await createCreator(t);
    const a = await place(alpha, 'Alpha Tier');
    const b = await place(beta, 'Beta Tier');
    const member = await createMember(t, { name: 'Duas Casas' });
    await mirrorSubscription(t, alpha, { ...a, memberId: member.id }, { status: 'active', createdAt: ago(10) });
    await mirrorSubscription(t, beta, { ...b, memberId: member.id }, { status: 'trialing', createdAt: ago(3) });
    const [exercise] = await catalogExercises(t, 1);
    await logWorkout(t, member, { communityId: b.communityId, performedAt: ago(1) }, exercise);
    await logWorkout(t, member, { communityId: b.communityId, performedAt: ago(0) }, exercise);

    const [inAlpha] = (await listMembers(t, alpha)).data;
    expect(inAlpha!.subscriptions).toEqual([{ community_id: a.communityId, tier_id: a.tierId, tier_name: 'Alpha Tier', status: 'active', joined_at: ago(10).toISOString() }]);
    expect(inAlpha!.engagement).toEqual({ last_active_at: null, workouts_completed_30d: 0, posts_count_30d: 0, streak_days: 0 });
    const [inBeta] = (await listMembers(t, beta)).data;
    expect(inBeta!.subscriptions).toEqual([{ community_id: b.communityId, tier_id: b.tierId, tier_name: 'Beta Tier', status: 'trialing', joined_at: ago(3).toISOString() }]);
    expect(inBeta!.engagement).toEqual({ last_active_at: clock.toISOString(), workouts_completed_30d: 2, posts_count_30d: 0, streak_days: 2 });
    // Status per creator: active for alpha, trial for beta.
    expect(await statusesOf(alpha, [member.id])).toEqual({ [member.id]: 'active' });
    expect(await statusesOf(beta, [member.id])).toEqual({ [member.id]: 'trial' });
  });

  it('another creator’s community or tier as a filter matches no one, and their members are never found', async () => {
    clock = START;
    const alpha = await createCreator(t);
    const beta = await createCreator(t);
    const a = await place(alpha);
    const b = await place(beta);
    const shared = await addMember(t, { name: 'Shared Person' });
    const betaOnly = await addMember(t, { name: 'Beta Only', email: `beta-only-${Date.now()}@example.com` });
    await join(alpha, a, shared, 'active', 2);
    await join(beta, b, shared, 'active', 2);
    await join(beta, b, betaOnly, 'active', 2);

    const queries: Array<Record<string, string>> = [{ community_id: b.communityId }, { tier_id: b.tierId }, { community_id: b.communityId, status: 'active' }, { tier_id: b.tierId, sort: 'name' }];
    for (const query of queries) {
      const res = await raw(alpha, query);
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res).data).toEqual([]);
      expect(json(res).pagination.total).toBe(0);
    }
    expect(await ids(alpha, { q: 'beta only' })).toEqual([]);
    expect(await ids(alpha, { q: 'beta-only' })).toEqual([]);
    expect(await ids(alpha, {})).toEqual([shared]);
    expect(await ids(beta, { sort: 'name' })).toEqual([betaOnly, shared]);
    expect((await getMemberRecord(t, alpha, betaOnly)).statusCode).toBe(404);
    // Nor does the community of a creator that does not exist.
    expect(await ids(alpha, { community_id: '0190a0b0-0000-7000-8000-000000000000' })).toEqual([]);
  });

  it('needs a creator key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/members' });
    expect(res.statusCode).toBe(401);
    const bad = await t.app.inject({ method: 'GET', url: '/api/v1/members', headers: { authorization: 'Bearer tribes_sk_nope' } });
    expect(bad.statusCode).toBe(401);
  });
});

describe('the answer as written', () => {
  it('writes each listed member exactly as their detail shows them, odd characters and all, as compact JSON', async () => {
    const { creator, basic, pro } = await creatorWithCommunity();
    const elite = await place(creator, 'Elite "Ünï" \\ tier');
    const odd = await addMember(t, { name: 'Zoë "Quote" \\ Back\\slash 🏋️ <b>&amp;', avatarUrl: 'https://example.com/a?x=1&y="2"' });
    await join(creator, basic, odd, 'canceled', 40);
    await join(creator, elite, odd, 'active', 10);
    await insertLogs(t, odd, [1, 2, 3].map((d) => ({ creatorId: creator.id, communityId: elite.communityId, performedAt: ago(d - 0.5) })));
    await setLastActive(t, creator.id, odd, ago(0.5));
    const plain = await addMember(t, { name: 'Ana Plain' });
    await join(creator, pro, plain, 'trialing', 1);

    for (const query of ['', `?community_id=${elite.communityId}`, '?q=zo', '?sort=name&limit=1&page=2', '?status=trial']) {
      const res = await raw(creator, query);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      // Compact, and escaped as JSON.stringify escapes.
      expect(res.body).toBe(JSON.stringify(JSON.parse(res.body)));
      const page = json(res);
      expect(page.data.length, query).toBeGreaterThan(0);
      for (const item of page.data) {
        expect(Object.keys(item)).toEqual(['id', 'name', 'email', 'avatar_url', 'subscriptions', 'engagement']);
        const detail = json(await getMemberRecord(t, creator, item.id)).data;
        expect(item).toEqual(Object.fromEntries(Object.keys(item).map((k) => [k, detail[k]])));
      }
    }
    const empty = await raw(creator, '?status=churned');
    expect(empty.body).toBe('{"success":true,"data":[],"pagination":{"page":1,"limit":20,"total":0,"pages":0,"total_is_estimate":false}}');
    const found = await listMembers(t, creator, '?q=zo');
    expect(idsOf(found)).toEqual([odd]);
    const item = found.data[0]!;
    expect(item.name).toBe('Zoë "Quote" \\ Back\\slash 🏋️ <b>&amp;');
    expect(item.subscriptions.map((s: { tier_name: string; status: string }) => [s.tier_name, s.status])).toEqual([
      ['Basic', 'canceled'],
      ['Elite "Ünï" \\ tier', 'active'],
    ]);
    expect(item.engagement).toEqual({ last_active_at: ago(0.5).toISOString(), workouts_completed_30d: 3, posts_count_30d: 0, streak_days: 3 });
  });
});

describe('the directory after many pages', () => {
  it('keeps list pages and totals consistent for a larger creator', async () => {
    clock = START;
    const { creator, basic, pro } = await creatorWithCommunity();
    const statuses: SubscriptionStatus[] = ['active', 'trialing', 'past_due', 'canceled'];
    for (let i = 0; i < 24; i++) {
      const id = await addMember(t, { name: `Member ${String(i).padStart(2, '0')}` });
      await join(creator, i % 2 ? basic : pro, id, statuses[i % 4]!, (i % 7) + 1);
    }
    for (const query of ['', '?status=active', '?sort=name', '?sort=-last_active_at', `?tier_id=${basic.tierId}`, '?q=member 1']) {
      const all = await listAllMembers(t, creator, query);
      const first = await listMembers(t, creator, `${query}${query ? '&' : '?'}limit=7`);
      expect(first.pagination.total, query).toBe(all.length);
      expect(first.pagination.pages, query).toBe(Math.ceil(all.length / 7));
      expect(new Set(all.map((m) => m.id)).size, query).toBe(all.length);
    }
  });
});

describe('totals above the exact-count limit', () => {
  // Its own app: the exact count stops at 2 here (MEMBERS_EXACT_COUNT_LIMIT), so a handful of members is "many".
  const CAP = 2;
  let capped: TestApp;
  beforeAll(async () => {
    capped = await buildTestApp({ now: () => clock, config: { membersExactCountLimit: CAP } });
  });
  afterAll(async () => capped.close());

  async function creatorWith(n: number, status: SubscriptionStatus = 'active') {
    clock = START;
    const creator = await createCreator(capped);
    const { communityId, tiers } = await communityWithTiers(capped, creator, ['Basic']);
    const members: string[] = [];
    for (let i = 0; i < n; i++) {
      const memberId = await addMember(capped, { name: `Capped ${i}` });
      await mirrorSubscription(capped, creator, { communityId, tierId: tiers[0]!.id, memberId }, { status, createdAt: ago((i + 1) / 10) });
      members.push(memberId);
    }
    return { creator, communityId, members };
  }

  it('says the exact total from a page that is not full, whatever the limit', async () => {
    const { creator } = await creatorWith(4);
    expect((await listMembers(capped, creator, '?limit=20')).pagination).toEqual({ page: 1, limit: 20, total: 4, pages: 1, total_is_estimate: false });
    expect((await listMembers(capped, creator, '?limit=3&page=2')).pagination).toEqual({ page: 2, limit: 3, total: 4, pages: 2, total_is_estimate: false });
  });

  it('flags the total as an estimate when more members match a filter than the limit and the page is full, with an integer total above it and pages to match', async () => {
    const { creator, members } = await creatorWith(4);
    for (const limit of [3, 1]) {
      const page = await listMembers(capped, creator, `?limit=${limit}&status=active`);
      expect(page.pagination.total_is_estimate).toBe(true);
      expect(Number.isInteger(page.pagination.total)).toBe(true);
      expect(page.pagination.total).toBeGreaterThanOrEqual(CAP + 1);
      expect(page.pagination.pages).toBe(Math.ceil(page.pagination.total / limit));
      // The page itself is exact whatever the total says.
      expect(idsOf(page)).toEqual(members.slice(0, limit));
    }
  });

  it('says the exact total of everyone, a community or a tier above the limit, and keeps it as members join and move to another tier', async () => {
    clock = START;
    const creator = await createCreator(capped);
    const { communityId, tiers } = await communityWithTiers(capped, creator, ['Basic', 'Pro']);
    const [basic, pro] = [tiers[0]!.id, tiers[1]!.id];
    const subscriptions: Array<{ memberId: string; id: string }> = [];
    for (let i = 0; i < 5; i++) {
      const memberId = await addMember(capped, { name: `Kept ${i}` });
      subscriptions.push({ memberId, id: await mirrorSubscription(capped, creator, { communityId, tierId: basic, memberId }, { status: 'active', createdAt: ago((i + 1) / 10) }) });
    }
    const totals = async () => {
      const scopes = ['', `&community_id=${communityId}`, `&tier_id=${basic}`, `&tier_id=${pro}`];
      return Promise.all(scopes.map(async (scope) => (await listMembers(capped, creator, `?limit=1${scope}`)).pagination));
    };
    const exact = (total: number) => ({ page: 1, limit: 1, total, pages: total, total_is_estimate: false });
    expect(await totals()).toEqual([exact(5), exact(5), exact(5), exact(0)]);
    // Two move to Pro, and one more joins on Pro.
    for (const s of subscriptions.slice(0, 2)) await mirrorSubscription(capped, creator, { communityId, tierId: pro, ...s }, { status: 'active' });
    const late = await addMember(capped, { name: 'Kept late' });
    await mirrorSubscription(capped, creator, { communityId, tierId: pro, memberId: late }, { status: 'active' });
    expect(await totals()).toEqual([exact(6), exact(6), exact(3), exact(3)]);
    // Another creator's tier is not this creator's: no members.
    const other = await createCreator(capped);
    expect((await listMembers(capped, other, `?limit=1&tier_id=${pro}`)).pagination).toEqual({ page: 1, limit: 1, total: 0, pages: 0, total_is_estimate: false });
  });

  it('answers an estimated total again for a minute per creator and filter without asking the planner, and never keeps an exact count', async () => {
    const { creator } = await creatorWith(4);
    const { creator: other } = await creatorWith(4);
    // The statements the repo sends, seen through a plugin on the app's own database.
    const sent: string[] = [];
    const spied = capped.database.db.withPlugin({
      transformQuery: ({ node }) => {
        if (node.kind === 'RawNode') sent.push(node.sqlFragments.join('?').trim());
        return node;
      },
      transformResult: async ({ result }) => result,
    });
    const repo = createDirectoryRepo(spied);
    const asks = async (creatorId: string, f: DirectoryFilter, at: Date) => {
      sent.length = 0;
      const total = await repo.count(creatorId, f, at, CAP);
      return { ...total, planned: sent.filter((q) => q.startsWith('explain')).length, counted: sent.filter((q) => q.startsWith('select count')).length };
    };
    const t0 = new Date(START.getTime() + 10 * DAY_MS);
    const later = (ms: number) => new Date(t0.getTime() + ms);
    // 4 match, the cap is 2: an estimate (the planner asked, then the count stopped at 3).
    const first = await asks(creator.id, { status: 'active' }, t0);
    expect(first).toMatchObject({ estimate: true, planned: 1 });
    expect(first.total).toBeGreaterThanOrEqual(CAP + 1);
    expect(await asks(creator.id, { status: 'active' }, later(59_000))).toEqual({ total: first.total, estimate: true, planned: 0, counted: 0 });
    // Another creator, another filter: their own.
    expect(await asks(other.id, { status: 'active' }, later(1_000))).toMatchObject({ estimate: true, planned: 1 });
    expect(await asks(creator.id, { status: 'active', q: 'capped' }, later(1_000))).toMatchObject({ estimate: true, planned: 1 });
    // A minute on, the planner is asked again.
    expect(await asks(creator.id, { status: 'active' }, later(ESTIMATE_KEEP_MS + 1))).toMatchObject({ estimate: true, planned: 1 });
    // An exact count (at most the cap match) is counted every time.
    for (const at of [t0, later(1_000)]) expect(await asks(creator.id, { q: 'capped 1' }, at)).toEqual({ total: 1, estimate: false, planned: 1, counted: 1 });
  });

  it('counts exactly when at most the limit match, however many members the creator has', async () => {
    const small = await creatorWith(2);
    expect((await listMembers(capped, small.creator)).pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1, total_is_estimate: false });
    const big = await creatorWith(6);
    expect((await listMembers(capped, big.creator, '?q=capped 3')).pagination).toMatchObject({ total: 1, pages: 1, total_is_estimate: false });
    expect((await listMembers(capped, big.creator, `?joined_after=${encodeURIComponent(ago(0.15).toISOString())}`)).pagination).toMatchObject({
      total: 1,
      total_is_estimate: false,
    });
  });

  it('counts exactly when a status filter matches none of many members, once the database has statistics', async () => {
    clock = START;
    const creator = await createCreator(capped);
    const { communityId, tiers } = await communityWithTiers(capped, creator, ['Basic']);
    // 100 members who all joined an hour ago: active, none at risk, churned or on trial.
    await addMembersInBulk(capped, creator, { communityId, tierId: tiers[0]!.id }, 100, { joinedAt: ago(1 / 24), stepMs: 1000 });
    const check = async (when: string) => {
      for (const status of ['at_risk', 'churned', 'trial']) {
        const page = await listMembers(capped, creator, `?status=${status}`);
        expect(page.data, `${status} ${when}`).toEqual([]);
        expect(page.pagination, `${status} ${when}`).toEqual({ page: 1, limit: 20, total: 0, pages: 0, total_is_estimate: false });
      }
    };
    await check('before statistics');
    // What autovacuum does on its own once a table has grown.
    await sql`analyze creator_members`.execute(capped.database.db);
    await check('after ANALYZE');
  });
});
