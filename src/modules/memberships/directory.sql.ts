import { sql, type RawBuilder } from 'kysely';

/**
 * The SQL pieces of the member directory's statements (directory.repo.ts) that speak of a
 * member's activity: `m` is the creator_members row, `a` its member_activity row.
 */

/** DESIGN §7: no activity for this long makes an otherwise active member at risk. */
export const QUIET_DAYS = 14;
export const DAY_MS = 86_400_000;

/**
 * Inactivity counts from the last activity, or the latest (re)joining if that is later
 * (`m` = creator_members, `a` = member_activity): greatest(last_active_at, last_joined_at) before the cutoff, spelled
 * per column so the planner estimates it from each column's statistics (the total of a long
 * list is that estimate).
 */
const cutoffOf = (now: Date) => new Date(now.getTime() - QUIET_DAYS * DAY_MS);
export const quietSince = (now: Date) => sql`((a.last_active_at is null or a.last_active_at < ${cutoffOf(now)}) and m.last_joined_at < ${cutoffOf(now)})`;
export const activeSince = (now: Date) => sql`(a.last_active_at >= ${cutoffOf(now)} or m.last_joined_at >= ${cutoffOf(now)})`;
/** A member's activity row (migrations/0032: one per directory row), `a` beside `m`. */
export const ACTIVITY = sql`join member_activity a on a.creator_id = m.creator_id and a.member_id = m.member_id`;

/**
 * How many instants of a kept array of `a` (member_activity.logged or .commented, migrations/0039:
 * ascending, complete after its `<name>_since`) fall in (lo, hi]: width_bucket counts the entries
 * at or below a value by a binary search, so two of them, whatever the array holds; `source` (the
 * rows counted) when the window starts before what is kept.
 */
export function keptCount(name: 'logged' | 'commented', lo: Date, hi: Date, source: RawBuilder<number>) {
  const kept = sql.ref(`a.${name}`);
  return sql`case when ${lo}::timestamptz < ${sql.ref(`a.${name}_since`)} then ${source}
    else width_bucket(${hi}::timestamptz, ${kept}) - width_bucket(${lo}::timestamptz, ${kept}) end`;
}
