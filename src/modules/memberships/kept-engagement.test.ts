import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildTestApp, createCreator, json, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { DAY_MS, getMemberRecord, insertLogs, placeIn, type Place } from '../../../test/members-kit.js';
import { asMember, createPost, crowd } from '../../../test/posts-kit.js';

/**
 * The directory's 30-day engagement counted from the instants member_activity keeps
 * (migrations/0039), held against the logs and comments themselves: at clocks inside and far
 * before what is kept, and after every kind of removal.
 */
const START = new Date('2026-04-01T12:00:00Z');
let clock = START;
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const at = (days: number) => new Date(START.getTime() + days * DAY_MS);

async function memberIn(creator: TestCreator): Promise<{ place: Place; member: TestMember }> {
  const place = await placeIn(t, creator);
  const [member] = await crowd(t, creator, place, 1);
  return { place, member: member! };
}

/** The member's two counts as the API answers them at `when`. */
async function countsAt(creator: TestCreator, memberId: string, when: Date) {
  clock = when;
  const res = await getMemberRecord(t, creator, memberId);
  const e = json(res).data.engagement as { workouts_completed_30d: number; posts_count_30d: number };
  return { workouts: e.workouts_completed_30d, posts: e.posts_count_30d };
}

/** The same counts straight from the rows, as the definition says: (when - 30 days, when]. */
async function truthAt(creatorId: string, memberId: string, when: Date) {
  const lo = new Date(when.getTime() - 30 * DAY_MS);
  const { rows } = await sql<{ workouts: number; posts: number }>`select
      (select count(*)::int from workout_logs where creator_id = ${creatorId} and member_id = ${memberId} and performed_at > ${lo} and performed_at <= ${when}) as workouts,
      (select count(*)::int from post_comments pc join posts p on p.id = pc.post_id and p.deleted_at is null
       where pc.creator_id = ${creatorId} and pc.member_id = ${memberId} and pc.created_at > ${lo} and pc.created_at <= ${when}) as posts`.execute(t.database.db);
  return rows[0]!;
}

/** What member_activity keeps, and what it should keep given its `since`s. */
async function kept(creatorId: string, memberId: string) {
  const { rows } = await sql<{ logged: string[]; logged_again: string[]; commented: string[]; commented_again: string[] }>`select
      a.logged::text[] as logged,
      array(select l.performed_at from workout_logs l where l.creator_id = a.creator_id and l.member_id = a.member_id and l.performed_at > a.logged_since order by 1)::text[] as logged_again,
      a.commented::text[] as commented,
      array(select pc.created_at from post_comments pc join posts p on p.id = pc.post_id and p.deleted_at is null
            where pc.creator_id = a.creator_id and pc.member_id = a.member_id and pc.created_at > a.commented_since order by 1)::text[] as commented_again
    from member_activity a where a.creator_id = ${creatorId} and a.member_id = ${memberId}`.execute(t.database.db);
  return rows[0]!;
}

async function expectExactAt(creator: TestCreator, memberId: string, whens: Date[]) {
  for (const when of whens) expect(await countsAt(creator, memberId, when), when.toISOString()).toEqual(await truthAt(creator.id, memberId, when));
}

describe('engagement kept beside the member', () => {
  it('counts logs from the kept instants, and from the logs themselves when the window starts before them', async () => {
    const creator = await createCreator(t);
    const { place, member } = await memberIn(creator);
    const log = (days: number) => insertLogs(t, member.id, [{ creatorId: creator.id, communityId: place.communityId, performedAt: at(days) }]);
    await log(-40);
    await log(-20);
    await log(-1);
    await log(-1);
    // Appended as they came (no trim within two months of the newest): day -40 is kept, and not counted.
    expect((await kept(creator.id, member.id)).logged).toHaveLength(4);
    expect(await countsAt(creator, member.id, START)).toMatchObject({ workouts: 3 });
    const [late] = await log(44);
    // Day -40 is more than two months below day 44: trimmed to the 31 days below it (after day 13),
    // so a read at START starts before what is kept and counts the logs instead.
    expect((await kept(creator.id, member.id)).logged).toHaveLength(1);
    expect(await countsAt(creator, member.id, START)).toMatchObject({ workouts: 3 });
    expect(await countsAt(creator, member.id, at(44))).toMatchObject({ workouts: 1 });
    await expectExactAt(creator, member.id, [at(-39), at(-10), at(9), at(10), at(13.9), at(14), at(43.9), at(44), at(74), at(75)]);
    await sql`delete from workout_logs where id = ${late!}`.execute(t.database.db);
    expect(await countsAt(creator, member.id, at(44))).toMatchObject({ workouts: 0 });
    expect(await countsAt(creator, member.id, START)).toMatchObject({ workouts: 3 });
    const state = await kept(creator.id, member.id);
    expect(state.logged).toEqual(state.logged_again);
  });

  it('stays equal to the logs and comments through deletions of logs, comments and a post', async () => {
    const creator = await createCreator(t);
    const { place, member } = await memberIn(creator);
    const posts = [await createPost(t, creator, { community_id: place.communityId }), await createPost(t, creator, { community_id: place.communityId })];
    const comment = async (post: { id: string }, days: number) => {
      clock = at(days);
      const res = await asMember(t, member, 'POST', `/posts/${post.id}/comments`, { body: `Day ${days}` });
      expect(res.statusCode, res.body).toBe(201);
      return json(res).data.id as string;
    };
    const logIds = await insertLogs(t, member.id, [-3, 0, 0, 5, 12, 33, 36].map((d) => ({ creatorId: creator.id, communityId: place.communityId, performedAt: at(d) })));
    const onFirst = [await comment(posts[0]!, 1), await comment(posts[0]!, 2)];
    await comment(posts[1]!, 3);
    await comment(posts[1]!, 20);
    const whens = [at(0), at(3), at(20), at(31), at(34), at(40), at(50)];
    await expectExactAt(creator, member.id, whens);
    // A workout logged late (older than the newest kept): sorted into place.
    await insertLogs(t, member.id, [{ creatorId: creator.id, communityId: place.communityId, performedAt: at(10) }]);
    await expectExactAt(creator, member.id, whens);

    clock = at(21);
    expect((await asMember(t, member, 'DELETE', `/posts/${posts[0]!.id}/comments/${onFirst[1]!}`)).statusCode).toBe(200);
    await sql`delete from workout_logs where id = any(${[logIds[1]!, logIds[5]!]}::uuid[])`.execute(t.database.db);
    await expectExactAt(creator, member.id, whens);
    // The first post deleted: its remaining comment stops counting.
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/posts/${posts[0]!.id}`, headers: creator.headers })).statusCode).toBe(200);
    await expectExactAt(creator, member.id, whens);
    const state = await kept(creator.id, member.id);
    expect(state.logged).toEqual(state.logged_again);
    expect(state.commented).toEqual(state.commented_again);
    expect(state.commented).toHaveLength(2);
  });

  // PGlite runs one statement at a time; a server lets the appends and the removals race.
  it.runIf(inject('postgresUrl'))('loses no entry when logs are added and deleted at the same time', async () => {
    const creator = await createCreator(t);
    const { place, member } = await memberIn(creator);
    const log = (days: number) => insertLogs(t, member.id, [{ creatorId: creator.id, communityId: place.communityId, performedAt: at(days) }]);
    const first = await Promise.all([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7].map((d) => log(d)));
    for (let i = 0; i < 8; i++) {
      // One log added while another (older) one is deleted, each in its own transaction.
      await Promise.all([log(1 + i / 10), sql`delete from workout_logs where id = ${first[i]![0]!}`.execute(t.database.db)]);
    }
    const state = await kept(creator.id, member.id);
    expect(state.logged).toEqual(state.logged_again);
    expect(state.logged).toHaveLength(8);
    await expectExactAt(creator, member.id, [at(1), at(2), at(30.5)]);
  });
});
