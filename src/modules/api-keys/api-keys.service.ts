import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, isoOrNull, type Executor } from '../../db/tx.js';
import { generateApiKey, type ApiKeyScope } from '../../http/auth.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import type { CreatorsRepo } from '../creators/creators.repo.js';
import type { CreateApiKeyBody, ListApiKeysQuery } from './api-keys.schemas.js';

/**
 * Live (unrevoked) keys a creator may hold at once: enough for every integration, few enough
 * that a script creating keys in a loop stops early rather than filling the table.
 */
export const MAX_LIVE_API_KEYS = 100;

type ApiKeyRow = NonNullable<Awaited<ReturnType<CreatorsRepo['findApiKey']>>>;

export const presentApiKey = (k: ApiKeyRow) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  scope: k.scope,
  created_at: iso(k.created_at),
  last_used_at: isoOrNull(k.last_used_at),
  revoked_at: isoOrNull(k.revoked_at),
});

export type PresentedApiKey = ReturnType<typeof presentApiKey>;

/** What the idempotency store keeps of an answer with a new key: all but the key (never stored). */
export const withoutSecret = <T extends { api_key: string | null }>(data: T): T => ({ ...data, api_key: null });

const limitReached = () =>
  new AppError(
    'api_key_limit_reached',
    `You already have ${MAX_LIVE_API_KEYS} live API keys, the most allowed. Revoke one you no longer use (DELETE /api/v1/api-keys/{id}) before creating another.`,
  );

const lastFullKey = () =>
  new AppError(
    'last_full_key',
    'This is your last live API key with scope "full"; without one nobody could manage your account through the API. Create another key with scope "full" first, then revoke this one.',
  );

/**
 * Issues a key within the live-key cap, in the caller's transaction (with its stored answer).
 * The creator's row is locked first, as every change to the set of live keys does, so two
 * concurrent requests cannot both pass the count. Undefined when there is no such creator.
 */
export async function issueApiKey(creators: CreatorsRepo, trx: Executor, creatorId: string, input: { name: string | null; scope: ApiKeyScope }) {
  if (!(await creators.lockCreatorKeys(creatorId, trx))) return undefined;
  if ((await creators.countLiveApiKeys(creatorId, undefined, trx)) >= MAX_LIVE_API_KEYS) throw limitReached();
  const key = generateApiKey();
  const row = await creators.insertApiKey(creatorId, { id: newId(), key_hash: key.hash, prefix: key.prefix, name: input.name, scope: input.scope }, trx);
  return { row, secret: key.key };
}

export type CreatedApiKey = PresentedApiKey & { api_key: string | null };

/** A creator's own keys (DESIGN §8): list, create (shown once), revoke. */
export function createApiKeysService({ db, creators }: { db: Db; creators: CreatorsRepo }) {
  return {
    /** Newest first (created_at, then id, both descending), revoked keys included. */
    async list(creatorId: string, query: ListApiKeysQuery) {
      const { rows, total } = await creators.pageApiKeys(creatorId, { limit: query.limit, offset: offsetOf(query) });
      return paginated(rows.map(presentApiKey), total, query);
    },

    async create(creatorId: string, input: CreateApiKeyBody, answer?: KeyedAnswer<CreatedApiKey>): Promise<CreatedApiKey> {
      return inTransaction(db, answer, async (trx) => {
        const issued = await issueApiKey(creators, trx, creatorId, { name: input.name.trim(), scope: input.scope });
        if (!issued) throw notFound('Creator');
        return { ...presentApiKey(issued.row), api_key: issued.secret };
      });
    },

    /**
     * Revokes one of the creator's keys; revoking it again answers it with its first revocation
     * time. The last live full key is kept (409 last_full_key): the creator's row is locked
     * first, so two requests revoking each other's last two full keys are judged one after the
     * other, and the second finds the first's revocation.
     */
    async revoke(creatorId: string, keyId: string) {
      return inTransaction(db, undefined, async (trx) => {
        await creators.lockCreatorKeys(creatorId, trx);
        const key = await creators.findApiKey(creatorId, keyId, trx);
        if (!key) throw notFound('API key');
        if (key.revoked_at) return presentApiKey(key);
        if (key.scope === 'full' && (await creators.countLiveApiKeys(creatorId, 'full', trx)) <= 1) throw lastFullKey();
        const revoked = await creators.revokeApiKey(keyId, trx);
        return presentApiKey(revoked!);
      });
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
