import { sql } from 'kysely';
import { deleteInRounds } from '../../db/purge.js';
import type { Executor } from '../../db/tx.js';
import { compiledQueries } from '../../db/compiled.js';
import { opaqueArray } from '../../db/prepared.js';

/** The per-request credential lookup, compiled once (src/db/compiled.ts). */
const tokenReads = compiledQueries('member_tokens', { prepare: true });

const PUBLIC_COLUMNS = ['id', 'name', 'email', 'avatar_url', 'created_at'] as const;

/**
 * Member accounts and their tokens. A member is one person across creators, so unlike the
 * tenant repos these queries are keyed by the member, never by a creator.
 */
export function createMembersRepo(db: Executor) {
  return {
    async findById(id: string, trx: Executor = db) {
      return trx.selectFrom('members').select(PUBLIC_COLUMNS).where('id', '=', id).executeTakeFirst();
    },

    /** The account with this e-mail, any case; lower() on both sides matches the unique index members_email_key. */
    async findByEmailWithHash(email: string, trx: Executor = db) {
      return trx
        .selectFrom('members')
        .select([...PUBLIC_COLUMNS, 'password_hash'])
        .where(sql<string>`lower(email)`, '=', sql<string>`lower(${email})`)
        .executeTakeFirst();
    },

    async insert(row: { id: string; name: string; email: string; password_hash: string }, trx: Executor = db) {
      return trx.insertInto('members').values(row).returning(PUBLIC_COLUMNS).executeTakeFirstOrThrow();
    },

    /** Stores a new token's digest; expiry is computed by the database clock, the same clock that checks it. */
    async insertToken(row: { id: string; member_id: string; token_hash: Buffer }, ttlMs: number, trx: Executor = db) {
      return trx
        .insertInto('member_tokens')
        .values({ ...row, expires_at: sql<Date>`now() + make_interval(secs => ${ttlMs / 1000})` })
        .returning(['expires_at'])
        .executeTakeFirstOrThrow();
    },

    /**
     * Every member request asks this, for the tokens of the requests that arrived together
     * (member-auth.ts): one prepared statement (src/db/prepared.ts), one index probe each.
     */
    async findActiveTokens(hashes: Buffer[], trx: Executor = db) {
      return tokenReads.rows(trx, 'active', [hashes], (h) =>
        sql<{ id: string; member_id: string; token_hash: Buffer }>`select id, member_id, token_hash from member_tokens
          where token_hash = any(${opaqueArray(h, 'bytea')}) and revoked_at is null and expires_at > now()`,
      );
    },

    /** Revokes one token of this member; revoking twice keeps the first time. */
    async revokeToken(memberId: string, hash: Buffer, trx: Executor = db) {
      const result = await trx
        .updateTable('member_tokens')
        .set({ revoked_at: new Date() })
        .where('member_id', '=', memberId)
        .where('token_hash', '=', hash)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Deletes tokens that expired (they open nothing any more), oldest first, in bounded rounds. */
    purgeExpiredTokens: (maxRounds = 20) => deleteInRounds(db, 'member_tokens', sql`expires_at < now()`, 'expires_at', { maxRounds }),
  };
}

export type MembersRepo = ReturnType<typeof createMembersRepo>;
export type MemberRow = NonNullable<Awaited<ReturnType<MembersRepo['findById']>>>;
