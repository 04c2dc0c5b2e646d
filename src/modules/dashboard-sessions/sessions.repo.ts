import { sql } from 'kysely';
import { deleteInRounds } from '../../db/purge.js';
import type { Executor } from '../../db/tx.js';
import type { ActiveSession } from '../../http/auth.js';

/** Idle expiry of a session, as SQL and as milliseconds: the auth hook's rule and the answers' `idle_expires_at` are one. */
export const SESSION_IDLE_HOURS = 12;
export const SESSION_IDLE_MS = SESSION_IDLE_HOURS * 3600_000;
const IDLE = sql.raw(`interval '${SESSION_IDLE_HOURS} hours'`);

const SESSION_COLUMNS = ['id', 'created_at', 'last_seen_at', 'expires_at', 'revoked_at', 'user_agent'] as const;

/** Sign-in links and dashboard sessions (migration 0026). Creator id first, except the lookups by a token's digest. */
export function createSessionsRepo(db: Executor) {
  const findSessionOf = (creatorId: string, sessionId: string, trx: Executor = db) =>
    trx.selectFrom('dashboard_sessions').select(SESSION_COLUMNS).where('creator_id', '=', creatorId).where('id', '=', sessionId).executeTakeFirst();

  return {
    async insertLoginLink(creatorId: string, link: { id: string; token_hash: Buffer; expires_at: Date }, trx: Executor = db) {
      await trx.insertInto('dashboard_login_links').values({ ...link, creator_id: creatorId }).execute();
    },

    /** Spends a link: one conditional update, so two requests racing with one link cannot both get a session. */
    async consumeLoginLink(hash: Buffer, trx: Executor = db): Promise<string | undefined> {
      const { rows } = await sql<{ creator_id: string }>`update dashboard_login_links set used_at = now()
        where token_hash = ${hash} and used_at is null and expires_at > now() returning creator_id`.execute(trx);
      return rows[0]?.creator_id;
    },

    async insertSession(creatorId: string, session: { id: string; token_hash: Buffer; expires_at: Date; user_agent: string | null }, trx: Executor = db) {
      await trx.insertInto('dashboard_sessions').values({ ...session, creator_id: creatorId }).execute();
    },

    /** The auth hook's one indexed read: the session however dead, with why, by the database's clock. */
    async findSession(hash: Buffer, trx: Executor = db): Promise<ActiveSession | undefined> {
      const { rows } = await sql<ActiveSession>`select id, creator_id, token_hash,
          revoked_at is not null as revoked,
          expires_at <= now() as expired,
          last_seen_at <= now() - ${IDLE} as idle,
          last_seen_at < now() - interval '60 seconds' as touch_due
        from dashboard_sessions where token_hash = ${hash}`.execute(trx);
      return rows[0];
    },

    /** last_seen_at to the minute, conditional like api_keys.last_used_at (nodes racing write it once). */
    async touchSession(sessionId: string, trx: Executor = db) {
      await sql`update dashboard_sessions set last_seen_at = now()
        where id = ${sessionId} and last_seen_at < now() - interval '60 seconds'`.execute(trx);
    },

    /** Live sessions (unrevoked, not idle, not expired), newest first. */
    async pageLiveSessions(creatorId: string, page: { limit: number; offset: number }, trx: Executor = db) {
      const live = trx
        .selectFrom('dashboard_sessions')
        .where('creator_id', '=', creatorId)
        .where('revoked_at', 'is', null)
        .where(sql<boolean>`expires_at > now() and last_seen_at > now() - ${IDLE}`);
      const [rows, count] = await Promise.all([
        live.select(SESSION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
        live.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.n) };
    },

    findSessionOf,

    /** Revokes it unless it already is; the row as it ends up either way. */
    async revokeSession(creatorId: string, sessionId: string, trx: Executor = db) {
      await trx
        .updateTable('dashboard_sessions')
        .set({ revoked_at: sql`now()` })
        .where('creator_id', '=', creatorId)
        .where('id', '=', sessionId)
        .where('revoked_at', 'is', null)
        .execute();
      return findSessionOf(creatorId, sessionId, trx);
    },

    /** Retention: links a day past their hour, sessions a day after they ended (revoked, idle or expired). */
    async purge(): Promise<number> {
      const links = await deleteInRounds(db, 'dashboard_login_links', sql`expires_at < now() - interval '1 day'`, 'expires_at');
      const sessions = await deleteInRounds(
        db,
        'dashboard_sessions',
        sql`(expires_at < now() - interval '1 day' or revoked_at < now() - interval '1 day' or last_seen_at < now() - ${IDLE} - interval '1 day')`,
        'expires_at',
      );
      return links + sessions;
    },
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
export type SessionRow = NonNullable<Awaited<ReturnType<SessionsRepo['findSessionOf']>>>;
