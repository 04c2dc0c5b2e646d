import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { compiledQueries } from '../../db/compiled.js';

/** The per-request credential lookup, compiled once (src/db/compiled.ts). */
const keyReads = compiledQueries('api_key', { prepare: true });

/** Creators and their API keys. Creators are the tenants; this is the one repo not scoped by one. */
export function createCreatorsRepo(db: Executor) {
  return {
    /** Creators with a processor account, by id, a page at a time (or only `only`): reconciliation walks them. */
    async withProcessorAccounts(afterId: string | null, limit: number, only?: string) {
      let q = db.selectFrom('creators').select(['id', 'processor_account_id']).where('processor_account_id', 'is not', null);
      if (only) q = q.where('id', '=', only);
      if (afterId) q = q.where('id', '>', afterId);
      return q.orderBy('id').limit(limit).execute();
    },

    async insertCreator(
      row: { id: string; name: string; email: string; processor_account_id: string | null },
      trx: Executor = db,
    ) {
      return trx.insertInto('creators').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async findCreator(creatorId: string, trx: Executor = db) {
      return trx.selectFrom('creators').selectAll().where('id', '=', creatorId).executeTakeFirst();
    },

    async findCreatorByEmail(email: string, trx: Executor = db) {
      return trx.selectFrom('creators').select('id').where(sql<string>`lower(email)`, '=', email.toLowerCase()).executeTakeFirst();
    },

    async insertApiKey(creatorId: string, key: { id: string; key_hash: Buffer; prefix: string }, trx: Executor = db) {
      return trx
        .insertInto('api_keys')
        .values({ ...key, creator_id: creatorId })
        .returning(['id', 'creator_id', 'prefix', 'created_at', 'revoked_at'])
        .executeTakeFirstOrThrow();
    },

    async listApiKeys(creatorId: string, trx: Executor = db) {
      return trx
        .selectFrom('api_keys')
        .select(['id', 'creator_id', 'prefix', 'created_at', 'revoked_at'])
        .where('creator_id', '=', creatorId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    },

    /** Revokes a key once; revoking it again keeps the first revocation time. */
    async revokeApiKey(keyId: string, trx: Executor = db) {
      await trx.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
      return trx
        .selectFrom('api_keys')
        .select(['id', 'creator_id', 'prefix', 'created_at', 'revoked_at'])
        .where('id', '=', keyId)
        .executeTakeFirst();
    },

    /** Every creator request asks this: compiled once, a prepared statement (src/db/compiled.ts). */
    async findActiveApiKey(hash: Buffer, trx: Executor = db) {
      const rows = await keyReads.rows(trx, 'active', [hash], (h) =>
        sql<{ id: string; creator_id: string; key_hash: Buffer }>`select id, creator_id, key_hash from api_keys where key_hash = ${h} and revoked_at is null`,
      );
      return rows[0];
    },
  };
}

export type CreatorsRepo = ReturnType<typeof createCreatorsRepo>;
