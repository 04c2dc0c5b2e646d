import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { compiledQueries } from '../../db/compiled.js';
import type { ApiKeyScope } from '../../db/types.js';
import type { ActiveApiKey } from '../../http/auth.js';

/** The per-request credential lookup, compiled once (src/db/compiled.ts). */
const keyReads = compiledQueries('api_key', { prepare: true });

/** What every read of a key answers: never its hash. */
const API_KEY_COLUMNS = ['id', 'creator_id', 'name', 'prefix', 'scope', 'created_at', 'last_used_at', 'revoked_at'] as const;

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

    async insertApiKey(
      creatorId: string,
      key: { id: string; key_hash: Buffer; prefix: string; name?: string | null; scope?: ApiKeyScope },
      trx: Executor = db,
    ) {
      return trx.insertInto('api_keys').values({ ...key, creator_id: creatorId }).returning(API_KEY_COLUMNS).executeTakeFirstOrThrow();
    },

    /** Every key of the creator, oldest first (the operator's view). */
    async listApiKeys(creatorId: string, trx: Executor = db) {
      return trx.selectFrom('api_keys').select(API_KEY_COLUMNS).where('creator_id', '=', creatorId).orderBy('created_at').orderBy('id').execute();
    },

    /** A page of the creator's keys, newest first, and how many there are. */
    async pageApiKeys(creatorId: string, page: { limit: number; offset: number }, trx: Executor = db) {
      const [rows, count] = await Promise.all([
        trx
          .selectFrom('api_keys')
          .select(API_KEY_COLUMNS)
          .where('creator_id', '=', creatorId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        trx.selectFrom('api_keys').select((eb) => eb.fn.countAll<string>().as('n')).where('creator_id', '=', creatorId).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.n) };
    },

    async findApiKey(creatorId: string, keyId: string, trx: Executor = db) {
      return trx.selectFrom('api_keys').select(API_KEY_COLUMNS).where('creator_id', '=', creatorId).where('id', '=', keyId).executeTakeFirst();
    },

    /**
     * Locks the creator's row until the transaction ends: every change to the set of a
     * creator's live keys takes it first, so the rules over that set (at most so many live
     * keys, at least one live full key) hold under concurrent requests.
     */
    async lockCreatorKeys(creatorId: string, trx: Executor) {
      return trx.selectFrom('creators').select('id').where('id', '=', creatorId).forUpdate().executeTakeFirst();
    },

    /** How many unrevoked keys the creator has, of `scope` when given. */
    async countLiveApiKeys(creatorId: string, scope: ApiKeyScope | undefined, trx: Executor = db) {
      let q = trx.selectFrom('api_keys').select((eb) => eb.fn.countAll<string>().as('n')).where('creator_id', '=', creatorId).where('revoked_at', 'is', null);
      if (scope) q = q.where('scope', '=', scope);
      return Number((await q.executeTakeFirstOrThrow()).n);
    },

    /** Revokes a key once; revoking it again keeps the first revocation time. */
    async revokeApiKey(keyId: string, trx: Executor = db) {
      await trx.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
      return trx.selectFrom('api_keys').select(API_KEY_COLUMNS).where('id', '=', keyId).executeTakeFirst();
    },

    /**
     * Every creator request asks this: compiled once, a prepared statement (src/db/compiled.ts).
     * touch_due is worked out by the database's clock, the same one the update below compares with.
     */
    async findActiveApiKey(hash: Buffer, trx: Executor = db) {
      const rows = await keyReads.rows(trx, 'active', [hash], (h) =>
        sql<ActiveApiKey>`select id, creator_id, key_hash, scope,
          (last_used_at is null or last_used_at < now() - interval '60 seconds') as touch_due
          from api_keys where key_hash = ${h} and revoked_at is null`,
      );
      return rows[0];
    },

    /**
     * last_used_at to the minute: conditional, so requests on several nodes that all saw an old
     * time write it once, and a key used within the minute is not written at all.
     */
    async touchApiKey(keyId: string, trx: Executor = db) {
      await sql`update api_keys set last_used_at = now()
        where id = ${keyId} and (last_used_at is null or last_used_at < now() - interval '60 seconds')`.execute(trx);
    },
  };
}

export type CreatorsRepo = ReturnType<typeof createCreatorsRepo>;
