import { sql } from 'kysely';
import { expect } from 'vitest';
import { newId } from '../src/db/ids.js';
import type { SubscriptionStatus } from '../src/db/types.js';
import { requalifyParticipations } from '../src/modules/challenges/qualification.js';
import { createMembershipRepo } from '../src/modules/subscriptions/membership.repo.js';
import { isLive } from '../src/modules/subscriptions/status.js';
import { createCommunity, createTier, json, uniq, type TestApp, type TestCreator } from './helpers.js';

/**
 * Member-directory fixtures. Subscriptions here are written the way the mirror writes them
 * (subscriptions/sync.ts): the row, then the directory refresh in the same transaction; the
 * processor is not involved, so tests can place joins and statuses anywhere in time.
 */
export async function addMember(t: TestApp, input: { name?: string; email?: string; avatarUrl?: string } = {}) {
  const id = newId();
  await t.database.db
    .insertInto('members')
    .values({ id, name: input.name ?? 'Maria Silva', email: input.email ?? `member-${uniq()}@example.com`, avatar_url: input.avatarUrl ?? null })
    .execute();
  return id;
}

export interface SubscriptionInput {
  status: SubscriptionStatus;
  createdAt?: Date;
  cancelAtPeriodEnd?: boolean;
  /** Billed price (default 4990 monthly). */
  priceCents?: number;
  billingPeriod?: 'monthly' | 'quarterly' | 'yearly';
  /** When a canceled subscription ended (the processor's time). */
  endedAt?: Date;
  /** The service's clock at the change (a lapse is recorded and challenge scoring stops at it); default now. */
  at?: Date;
}

/** Writes a subscription (or, given `id`, changes it) as the mirror would: directory, counters and challenge scoring included. */
export async function mirrorSubscription(
  t: TestApp,
  creator: TestCreator,
  where: { communityId: string; tierId: string; memberId: string; id?: string },
  input: SubscriptionInput,
): Promise<string> {
  const id = where.id ?? newId();
  const at = input.at ?? new Date();
  // As the mirror keeps it (migrations/0020): when it stopped being live; first seen not live, it never was.
  const lapses = !isLive(input.status) && input.status !== 'canceled';
  await t.database.db.transaction().execute(async (trx) => {
    const values = {
      status: input.status,
      cancel_at_period_end: input.cancelAtPeriodEnd ?? false,
      tier_id: where.tierId,
      community_id: where.communityId,
      ...(input.priceCents !== undefined ? { price_cents: input.priceCents } : {}),
      ...(input.billingPeriod ? { billing_period: input.billingPeriod } : {}),
      ...(input.endedAt ? { ended_at: input.endedAt, canceled_at: input.endedAt } : {}),
    };
    if (where.id) {
      const lapsedAt = isLive(input.status) ? null : lapses ? sql<Date>`coalesce(lapsed_at, ${at})` : sql<Date | null>`lapsed_at`;
      await trx.updateTable('subscriptions').set({ ...values, lapsed_at: lapsedAt }).where('id', '=', id).execute();
    } else {
      await trx
        .insertInto('subscriptions')
        .values({
          id,
          creator_id: creator.id,
          member_id: where.memberId,
          processor_subscription_id: `sub_test_${uniq()}`,
          created_at: input.createdAt ?? new Date(),
          lapsed_at: lapses ? (input.createdAt ?? new Date()) : null,
          ...values,
          price_cents: input.priceCents ?? 4990,
          billing_period: input.billingPeriod ?? 'monthly',
        })
        .execute();
    }
    const repo = createMembershipRepo();
    await repo.recordChange(creator.id, id, trx);
    await requalifyParticipations(creator.id, where.memberId, at, trx);
    await repo.refresh(creator.id, where.memberId, where.communityId, trx);
    await t.app.metricsCounters.refresh(creator.id, where.memberId, trx);
  });
  return id;
}

/** A community with `tiers` tiers (names Basic, Pro, Elite, ...), made through the API. */
export async function communityWithTiers(t: TestApp, creator: TestCreator, names: string[] = ['Basic', 'Pro']) {
  const community = await createCommunity(t, creator);
  const tiers: Array<{ id: string; name: string }> = [];
  for (const [i, name] of names.entries()) {
    const tier = await createTier(t, creator, community.id, { name, price_cents: 1000 * (i + 1) });
    tiers.push({ id: tier.id, name });
  }
  return { communityId: community.id, tiers };
}

export async function listMembers(t: TestApp, creator: TestCreator, query = '') {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/members${query}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { data: Array<Record<string, any>>; pagination: Record<string, any> };
}

export const idsOf = (page: { data: Array<Record<string, any>> }) => page.data.map((m) => m.id as string);

// ---- Helpers for the directory, export and member-record behaviour tests (issue #12 item 6). ----

export const DAY_MS = 86_400_000;

/** `n` exercises of the global catalog (no creator), in a stable order. */
export async function catalogExercises(t: TestApp, n = 2): Promise<string[]> {
  const rows = await t.database.db.selectFrom('exercises').select('id').where('creator_id', 'is', null).orderBy('id').limit(n).execute();
  if (rows.length < n) throw new Error(`the catalog has ${rows.length} exercises, ${n} wanted`);
  return rows.map((r) => r.id);
}

export interface LogInput {
  /** The community trained for; omit for a personal log. */
  communityId?: string;
  performedAt: Date | string;
  sets?: Array<{ exercise_id: string; reps: number; load_kg?: number }>;
}

/** Logs a workout through the member API (`POST /api/v1/member/workout-logs`); expects 201 and returns the log. */
export async function logWorkout(t: TestApp, member: { headers: { authorization: string } }, input: LogInput, exerciseId?: string) {
  const performed_at = input.performedAt instanceof Date ? input.performedAt.toISOString() : input.performedAt;
  const sets = input.sets ?? [{ exercise_id: exerciseId ?? (await catalogExercises(t, 1))[0]!, reps: 5, load_kg: 20 }];
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/member/workout-logs',
    headers: member.headers,
    payload: { ...(input.communityId ? { community_id: input.communityId } : {}), performed_at, sets },
  });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data as { id: string; community_id: string | null; performed_at: string; created_at: string; prs: Array<Record<string, any>> };
}

/**
 * Workout logs written straight into the table (no sets, no PRs, no activity), for history at
 * any date of members that have no token. `creatorId`/`communityId` null: a personal log.
 */
export async function insertLogs(
  t: TestApp,
  memberId: string,
  logs: Array<{ creatorId: string | null; communityId: string | null; performedAt: Date; setsCount?: number }>,
): Promise<string[]> {
  const rows = logs.map((l) => ({
    id: newId(),
    member_id: memberId,
    creator_id: l.creatorId,
    community_id: l.communityId,
    workout_id: null,
    performed_at: l.performedAt,
    created_at: l.performedAt,
    sets_count: l.setsCount ?? 1,
  }));
  if (rows.length) await t.database.db.insertInto('workout_logs').values(rows).execute();
  return rows.map((r) => r.id);
}

/** Places the member's last activity with the creator (member_activity.last_active_at) where a test needs it. */
export async function setLastActive(t: TestApp, creatorId: string, memberId: string, at: Date | null) {
  await t.database.db.transaction().execute(async (trx) => {
    await trx.updateTable('member_activity').set({ last_active_at: at }).where('creator_id', '=', creatorId).where('member_id', '=', memberId).execute();
    // Back-dated, so older than the metrics' last fold of activity: folded now, as the mirror would.
    await t.app.metricsCounters.refresh(creatorId, memberId, trx);
  });
}

/** GET /api/v1/members/:id as the creator (any status code). */
export async function getMemberRecord(t: TestApp, creator: TestCreator, memberId: string) {
  return t.app.inject({ method: 'GET', url: `/api/v1/members/${memberId}`, headers: creator.headers });
}

/** GET /api/v1/members/export.csv as the creator (any status code). */
export async function exportMembers(t: TestApp, creator: TestCreator, query = '') {
  return t.app.inject({ method: 'GET', url: `/api/v1/members/export.csv${query}`, headers: creator.headers });
}

/** Every page of the list for `query` (limit 100), concatenated. */
export async function listAllMembers(t: TestApp, creator: TestCreator, query = '') {
  const sep = query ? '&' : '?';
  const all: Array<Record<string, any>> = [];
  for (let page = 1; ; page++) {
    const res = await listMembers(t, creator, `${query}${sep}limit=100&page=${page}`);
    all.push(...res.data);
    if (page >= res.pagination.pages) return all;
  }
}

/**
 * `n` members subscribed to one tier, written set-based (one statement each for members and
 * subscriptions) and brought into the directory by `rebuild`, as the scale seeders do: for
 * tests that need more members than one export batch. Member `i` (1-based) is named
 * `${prefix} ${i padded to 5}` and joined `joinedAt` minus (i / tieEvery, rounded down) × stepMs,
 * so every `tieEvery` consecutive members share a join time. Ids come back in `i` order.
 */
export async function addMembersInBulk(
  t: TestApp,
  creator: TestCreator,
  place: { communityId: string; tierId: string },
  n: number,
  opts: { joinedAt: Date; prefix?: string; status?: SubscriptionStatus; stepMs?: number; tieEvery?: number },
): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId());
  const tag = uniq();
  const db = t.database.db;
  await sql`insert into members (id, name, email)
    select x.id, ${opts.prefix ?? 'Bulk'} || ' ' || lpad(x.n::text, 5, '0'), ${`bulk-${tag}-`} || x.n || '@example.com'
    from unnest(${ids}::uuid[]) with ordinality as x(id, n)`.execute(db);
  await sql`insert into subscriptions (id, creator_id, community_id, tier_id, member_id, status, price_cents, billing_period, processor_subscription_id, created_at)
    select gen_random_uuid(), ${creator.id}, ${place.communityId}, ${place.tierId}, x.id, ${opts.status ?? 'active'}, 4990, 'monthly', ${`sub_bulk_${tag}_`} || x.n,
           ${opts.joinedAt}::timestamptz - (x.n / ${opts.tieEvery ?? 1}) * ${opts.stepMs ?? 60_000} * interval '1 millisecond'
    from unnest(${ids}::uuid[]) with ordinality as x(id, n)`.execute(db);
  await createMembershipRepo().rebuild(creator.id, db);
  return ids;
}

/** Where a member subscribes: a community and one of its tiers. */
export interface Place {
  communityId: string;
  tierId: string;
}

/** A new community of the creator with one tier named `tierName`. */
export async function placeIn(t: TestApp, creator: TestCreator, tierName = 'Basic'): Promise<Place> {
  const { communityId, tiers } = await communityWithTiers(t, creator, [tierName]);
  return { communityId, tierId: tiers[0]!.id };
}

/**
 * Fixtures relative to a test file's clock: `ago(days)` before it, and `join`, a subscription
 * of the member in `at` created `daysAgo` days before it. `app` is read on each call (a file's
 * app is built in beforeAll).
 */
export function onClock(app: () => TestApp, clock: () => Date) {
  const ago = (days: number) => new Date(clock().getTime() - days * DAY_MS);
  const join = (creator: TestCreator, at: Place, memberId: string, status: SubscriptionStatus, daysAgo: number, cancelAtPeriodEnd = false) =>
    mirrorSubscription(app(), creator, { ...at, memberId }, { status, createdAt: ago(daysAgo), cancelAtPeriodEnd });
  return { ago, join };
}
