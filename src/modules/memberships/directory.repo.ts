import { sql, type RawBuilder } from 'kysely';
import { containsPattern } from '../../db/like.js';
import { ALL_COMMUNITIES } from '../metrics/counters.js';
import { pageWindow, plannedOnce } from '../../db/prepared.js';
import { ISO, type Executor } from '../../db/tx.js';
import { ACTIVITY, activeSince, DAY_MS, keptCount, quietSince } from './directory.sql.js';
import type { MembershipState, SubscriptionStatus } from '../../db/types.js';

export type MemberStatus = MembershipState;
export type SortKey = 'joined_at' | 'last_active_at' | 'name';

export interface DirectoryFilter {
  communityId?: string;
  tierId?: string;
  status?: MemberStatus;
  joinedAfter?: Date;
  q?: string;
}

export interface DirectorySort {
  key: SortKey;
  desc: boolean;
}

/**
 * The scope whose total directory_totals keeps (migrations/0030) when the filter is nothing
 * more than one scope: the creator's whole directory, a community, or a tier. Else undefined.
 */
function keptScope(f: DirectoryFilter): string | undefined {
  if (f.status || f.joinedAfter || f.q !== undefined || (f.communityId && f.tierId)) return undefined;
  return f.communityId ?? f.tierId ?? ALL_COMMUNITIES;
}

/** How long an estimated total answers again without asking the planner, and how many are kept (oldest dropped first). */
export const ESTIMATE_KEEP_MS = 60_000;
const ESTIMATES_KEPT = 1_000;

/** A row of the directory, as read for a page or an export batch (the service presents it). */
export interface DirectoryRow {
  member_id: string;
  name: string;
  email: string;
  avatar_url: string | null;
  status: MemberStatus;
  /** First join: to the community (or tier's community) the list is narrowed to, else to any of the creator's. ISO 8601, UTC, ms. */
  joined_at: string;
  /** ISO 8601, UTC, ms; null: never active. */
  last_active_at: string | null;
  workouts_completed_30d: number;
  posts_count_30d: number;
  streak_days: number;
  /** One per community (creator_members.subscriptions, migrations/0035); joined_at as the API writes it (ISO 8601, UTC, ms). */
  subscriptions: Array<{ community_id: string; tier_id: string; tier_name: string; status: SubscriptionStatus; joined_at: string }>;
}

/** A row as the statement answers it: subscriptions without their tier's name, the names beside the first row. */
type StoredRow = Omit<DirectoryRow, 'subscriptions'> & {
  sort_value: string | null;
  subscriptions: Array<Omit<DirectoryRow['subscriptions'][number], 'tier_name'> & { tier_name?: string }>;
  tier_names: Record<string, string> | null;
  kept_total: number | null;
};

/** Where a page or batch starts after (keyset): the last row's sort value and id. */
export interface After {
  value: string | null;
  memberId: string;
}

/**
 * The creator's member directory (migrations/0013): creator_members, one row per member, and
 * community_members, one per member and community, when the list is narrowed to a community
 * or tier. Status is evaluated where the list is scoped (DESIGN §7; within the community when
 * one is named), activity always over all of the creator's communities.
 */
export function createDirectoryRepo(db: Executor) {
  /**
   * Estimated totals by creator and filter, kept ESTIMATE_KEEP_MS on this node: asking the
   * planner costs a round trip and a planning per request (more than the page itself for a
   * status filter at a million members), and the answer is flagged as an estimate anyway. An
   * exact total (a kept one, or a count under the cap) is never kept.
   */
  const estimates = new Map<string, { total: number; until: number }>();
  function remember(memo: string, total: number, now: Date) {
    if (estimates.size >= ESTIMATES_KEPT) estimates.delete(estimates.keys().next().value!);
    estimates.set(memo, { total, until: now.getTime() + ESTIMATE_KEEP_MS });
    return { total, estimate: true };
  }

  /** The FROM and WHERE of a query; `c` is the community row when scoped, `m` the creator's. */
  function matching(creatorId: string, f: DirectoryFilter, sort: DirectorySort, now: Date) {
    const scoped = Boolean(f.communityId || f.tierId);
    const state = sql.ref(scoped ? 'c.state' : 'm.state');
    const joined = sql.ref(scoped ? 'c.joined_at' : 'm.joined_at');
    const quiet = quietSince(now);
    const conditions: RawBuilder<unknown>[] = [sql`${sql.ref(scoped ? 'c.creator_id' : 'm.creator_id')} = ${creatorId}`];
    if (f.communityId) conditions.push(sql`c.community_id = ${f.communityId}`);
    if (f.tierId) conditions.push(sql`c.tier_id = ${f.tierId}`);
    if (f.status === 'churned' || f.status === 'trial') conditions.push(sql`${state} = ${f.status}`);
    if (f.status === 'at_risk') conditions.push(sql`(${state} = 'at_risk' or (${state} = 'active' and ${quiet}))`);
    if (f.status === 'active') conditions.push(sql`(${state} = 'active' and ${activeSince(now)})`);
    if (f.joinedAfter) conditions.push(sql`${joined} > ${f.joinedAfter}`);
    if (f.q) conditions.push(sql`m.search like fold(${containsPattern(f.q)})`);
    // The community rows alone answer a scoped list by join date with no activity rule or search;
    // activity is joined only for an activity rule or order.
    const needsActivity = f.status === 'active' || f.status === 'at_risk' || sort.key === 'last_active_at';
    const needsMember = !scoped || f.q !== undefined || needsActivity || sort.key !== 'joined_at';
    const activity = needsActivity ? ACTIVITY : sql``;
    const from = !scoped
      ? sql`creator_members m ${activity}`
      : needsMember
        ? sql`community_members c join creator_members m on m.creator_id = c.creator_id and m.member_id = c.member_id ${activity}`
        : sql`community_members c`;
    const memberId = sql.ref(scoped ? 'c.member_id' : 'm.member_id');
    return { from, where: sql.join(conditions, sql` and `), joined, memberId };
  }

  /** ORDER BY of a sort, ties by member id in the same direction; each has its index (0013). */
  function ordering(sort: DirectorySort, joined: RawBuilder<unknown>, memberId: RawBuilder<unknown>) {
    const dir = sql.raw(sort.desc ? 'desc' : 'asc');
    if (sort.key === 'joined_at') return { value: joined, order: sql`${joined} ${dir}, ${memberId} ${dir}` };
    if (sort.key === 'name') return { value: sql`m.name_key collate "C"`, order: sql`m.name_key collate "C" ${dir}, ${memberId} ${dir}` };
    // Members never active come last newest-first, first oldest-first (the index's order read either way).
    return { value: sql`a.last_active_at`, order: sql`a.last_active_at ${dir} nulls ${sql.raw(sort.desc ? 'last' : 'first')}, ${memberId} ${dir}` };
  }

  /** Rows strictly after `after` in the sort's order (keyset, for the export). */
  function keyset(sort: DirectorySort, value: RawBuilder<unknown>, memberId: RawBuilder<unknown>, after: After) {
    const beyond = sql.raw(sort.desc ? '<' : '>');
    // Sort values travel as text (microseconds intact; a JavaScript Date would drop them).
    const last = sort.key === 'name' ? sql`${after.value}::text` : sql`${after.value}::timestamptz`;
    if (sort.key === 'last_active_at') {
      // Nulls come after every date when descending, before every date when ascending.
      if (after.value === null) return sort.desc ? sql`(${value} is null and ${memberId} < ${after.memberId})` : sql`(${value} is not null or ${memberId} > ${after.memberId})`;
      return sort.desc
        ? sql`(${value} < ${last} or (${value} = ${last} and ${memberId} < ${after.memberId}) or ${value} is null)`
        : sql`(${value} > ${last} or (${value} = ${last} and ${memberId} > ${after.memberId}))`;
    }
    return sql`(${value}, ${memberId}) ${beyond} (${last}, ${after.memberId}::uuid)`;
  }

  /**
   * The directory rows of `ids` (an SQL uuid[]), in that order, with each member's
   * subscriptions and engagement; status evaluated within the community or tier of `scope`
   * when it names one. One statement: when `ids` picks a page from an index (an index-only
   * walk, however deep), only the rows of the page are read.
   */
  async function rowsOf(creatorId: string, ids: RawBuilder<unknown>, scope: DirectoryFilter, value: RawBuilder<unknown>, now: Date, trx: Executor, prepare = false, total?: string) {
    const scoped = Boolean(scope.communityId || scope.tierId);
    const state = sql.ref(scoped ? 'c.state' : 'm.state');
    const today = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
    // The UTC day as text: a Date parameter is sent in the server's local zone, and its ::date would be that zone's day.
    const todayUtc = today.toISOString().slice(0, 10);
    const monthAgo = new Date(now.getTime() - 30 * DAY_MS);
    // Prepared (db/prepared.ts) when asked: planning this statement cost PostgreSQL as much as
    // running it. Its text is fixed per filter shape (every value is a parameter).
    const { rows } = await sql<StoredRow>`${sql.raw(prepare ? '/*prepare:directory_rows*/ ' : '')}
      select m.member_id, m.name, m.email, m.avatar_url,
             -- Instants as the API writes them: no Date parsed and written again per row.
             ${sql.raw(ISO(scoped ? 'c.joined_at' : 'm.joined_at'))} as joined_at, ${sql.raw(ISO('a.last_active_at'))} as last_active_at,
             case when ${state} = 'active' and ${quietSince(now)} then 'at_risk' else ${state} end as status,
             (${value})::text as sort_value,
             -- Counted from the instants member_activity keeps (migrations/0039); from the logs'
             -- and comments' indexes only when the window starts before what is kept.
             ${keptCount('logged', monthAgo, now, sql`(select count(*)::int from workout_logs l
               where l.creator_id = m.creator_id and l.member_id = m.member_id and l.performed_at > ${monthAgo} and l.performed_at <= ${now})`)} as workouts_completed_30d,
             -- Members write comments (posts are the creator's); a deleted post's stop counting. Its
             -- post is looked up per comment by primary key: as a join, the planner hashed all the
             -- creator's posts once per member row (27 ms a page with 300 posts, not 0.5).
             ${keptCount('commented', monthAgo, now, sql`(select count(*)::int from post_comments pc
               where pc.creator_id = m.creator_id and pc.member_id = m.member_id and pc.created_at > ${monthAgo} and pc.created_at <= ${now}
                 and (select po.deleted_at from posts po where po.id = pc.post_id) is null)`)} as posts_count_30d,
             -- Consecutive UTC days with a log, ending today or yesterday: the member's latest run,
             -- kept in member_activity (migrations/0036), unless it ends after today (a log up to
             -- 5 minutes ahead, past midnight): then among the distinct days before tomorrow,
             -- newest first, the k-th belongs to the run while it is exactly k days before the newest.
             case when a.streak_to is null then 0
                  when a.streak_to <= ${todayUtc}::date then
                    case when a.streak_to >= ${todayUtc}::date - 1 then a.streak_to - a.streak_from + 1 else 0 end
                  else (select count(*)::int from (
                    select d.day, max(d.day) over () as top, (row_number() over (order by d.day desc))::int - 1 as k
                    from (select distinct (l.performed_at at time zone 'UTC')::date as day from workout_logs l
                          where l.creator_id = m.creator_id and l.member_id = m.member_id and l.performed_at < ${new Date(today.getTime() + DAY_MS)}) d
                  ) r where r.top >= ${todayUtc}::date - 1 and r.day + r.k = r.top) end as streak_days,
             m.subscriptions,
             -- The names of the creator's tiers, read once per statement (an init plan) and sent
             -- with the first row only: the subscriptions copied into the row name their tier by id,
             -- since a creator may rename a tier.
             case when x.n = 1 then (select jsonb_object_agg(t.id, t.name) from tiers t where t.creator_id = ${creatorId}) end as tier_names,
             -- The scope's kept total, the same way: a full page needs it, and it costs no round trip of its own.
             ${total ? sql`case when x.n = 1 then coalesce((select members from directory_totals where creator_id = ${creatorId} and scope_id = ${total}), 0)::int end` : sql`null::int`} as kept_total
      from unnest(${ids}::uuid[]) with ordinality as x(member_id, n)
      join creator_members m on m.creator_id = ${creatorId} and m.member_id = x.member_id
      ${ACTIVITY}
      ${scoped ? sql`join community_members c on c.creator_id = m.creator_id and c.member_id = m.member_id and ${scope.communityId ? sql`c.community_id = ${scope.communityId}` : sql`c.tier_id = ${scope.tierId}`}` : sql``}
      order by x.n`.execute(trx);
    const names = rows[0]?.tier_names ?? {};
    for (const r of rows) for (const sub of r.subscriptions) sub.tier_name = names[sub.tier_id] ?? '';
    return rows as Array<DirectoryRow & { sort_value: string | null; kept_total?: number | null }>;
  }

  return {
    /**
     * One page (offset) or batch (keyset `after`) of the directory with each member's
     * subscriptions and engagement, in one statement: the ids are picked from the sort's
     * index first (an index-only walk, however deep the page), then only those rows are read.
     */
    async page(creatorId: string, f: DirectoryFilter, sort: DirectorySort, now: Date, at: { offset: number; limit: number; after?: After }, trx: Executor = db) {
      const q = matching(creatorId, f, sort, now);
      const { value, order } = ordering(sort, q.joined, q.memberId);
      const where = at.after ? sql`${q.where} and ${keyset(sort, value, q.memberId, at.after)}` : q.where;
      const window = at.after ? sql`offset ${at.offset} limit ${at.limit}` : pageWindow(at.offset, at.limit);
      const pick = sql`select ${q.memberId} as member_id from ${q.from} where ${where} order by ${order} ${window}`;
      // One prepared statement when its text fixes the page: a list's first page of a common size
      // (pageWindow), or an export's batch (planned each time, a small part of a batch). Otherwise
      // the page is planned for its values (a search for its term: a common one walks an index, a
      // rare one the trigrams; a deeper page for its offset): only its ids, apart, and the rows are
      // read by ids with the prepared statement (`q=silva` had spent 1.7 of 3.1 ms planning).
      const ids =
        f.q === undefined && (at.after !== undefined || plannedOnce(at.offset, at.limit))
          ? sql`array(${pick})`
          : sql`${(await sql<{ member_id: string }>`${pick}`.execute(trx)).rows.map((r) => r.member_id)}::uuid[]`;
      const rows = await rowsOf(creatorId, ids, f, value, now, trx, true, at.after ? undefined : keptScope(f));
      // The kept total (directory_totals) of a list of a whole scope, read with the page; else undefined.
      return { rows, total: rows[0]?.kept_total ?? undefined };
    },

    /**
     * How many members match. A list of a whole scope (everyone, a community, a tier) reads
     * its kept total (directory_totals). Otherwise the planner's estimate first (a millisecond at any size); when
     * it says the matches are few, an exact count that walks at most `cap` + 1 of them. Above
     * `cap` the total is the estimate, flagged: a count over a million rows per request would
     * cost more than the page itself. An estimate answers the same creator and filter again for
     * ESTIMATE_KEEP_MS (planning it cost a status-filtered first page at 1M members a quarter
     * of its throughput).
     */
    async count(creatorId: string, f: DirectoryFilter, now: Date, cap: number, trx: Executor = db): Promise<{ total: number; estimate: boolean }> {
      const scope = keptScope(f);
      if (scope) {
        const { rows } = await sql<{ n: number }>`/*prepare:directory_total*/ select coalesce(
            (select members from directory_totals where creator_id = ${creatorId} and scope_id = ${scope}), 0)::int as n`.execute(trx);
        return { total: rows[0]!.n, estimate: false };
      }
      const memo = `${creatorId}|${f.communityId ?? ''}|${f.tierId ?? ''}|${f.status ?? ''}|${f.joinedAfter?.toISOString() ?? ''}|${f.q ?? ''}`;
      const known = estimates.get(memo);
      if (known && known.until > now.getTime()) return { total: known.total, estimate: true };
      const q = matching(creatorId, f, { key: 'joined_at', desc: true }, now);
      const plan = await sql<{ 'QUERY PLAN': unknown }>`explain (format json) select 1 from ${q.from} where ${q.where}`.execute(trx);
      const raw = plan.rows[0]!['QUERY PLAN'];
      const estimated = Math.round(((typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: { 'Plan Rows': number } }>)[0]!.Plan['Plan Rows']);
      // A filtered estimate can be off by a factor; five times the cap, an exact count would not come out below it.
      if (estimated > 5 * cap) return remember(memo, estimated, now);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from (select 1 from ${q.from} where ${q.where} limit ${cap + 1}) t`.execute(trx);
      const n = rows[0]!.n;
      return n <= cap ? { total: n, estimate: false } : remember(memo, Math.max(estimated, n), now);
    },

    /**
     * Every match's id, numbered in the sort's order, into a new temporary table `table`
     * (`n`, `member_id`): the order of an export fixed in one statement, so that batches read
     * later by `pageInOrder` hold each member exactly once even when one moves in the order
     * meanwhile. For the embedded database, whose one session keeps the table between batches
     * without keeping a transaction (or the connection) open.
     */
    async orderInto(creatorId: string, f: DirectoryFilter, sort: DirectorySort, now: Date, table: string, trx: Executor = db) {
      const q = matching(creatorId, f, sort, now);
      const { order } = ordering(sort, q.joined, q.memberId);
      await sql`create temp table ${sql.id(table)} (n bigint primary key, member_id uuid not null)`.execute(trx);
      await sql`insert into ${sql.id(table)} (n, member_id) select row_number() over (order by ${order}), ${q.memberId} from ${q.from} where ${q.where}`.execute(trx);
    },

    /** The `limit` rows after number `after` of a table `orderInto` wrote, in its order (status within `scope`'s community or tier). */
    async pageInOrder(creatorId: string, scope: DirectoryFilter, table: string, at: { after: number; limit: number }, now: Date, trx: Executor = db) {
      const ids = sql`array(select member_id from ${sql.id(table)} where n > ${at.after} order by n limit ${at.limit})`;
      return rowsOf(creatorId, ids, scope, sql`null`, now, trx);
    },

    async dropOrder(table: string, trx: Executor = db) {
      await sql`drop table if exists ${sql.id(table)}`.execute(trx);
    },

    /** The member's directory row (status over all the creator's communities), or undefined when they never subscribed to this creator. */
    async find(creatorId: string, memberId: string, now: Date, trx: Executor = db) {
      const rows = await rowsOf(creatorId, sql`array[${memberId}::uuid]`, {}, sql`null`, now, trx);
      return rows[0];
    },
  };
}

export type DirectoryRepo = ReturnType<typeof createDirectoryRepo>;
