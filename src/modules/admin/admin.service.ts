import type { Logger } from 'pino';
import { uniqueViolation } from '../../db/errors.js';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso } from '../../db/tx.js';
import { generateApiKey } from '../../http/auth.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import type { Processor } from '../../processor/processor.js';
import type { AccountSync } from '../account/account-sync.js';
import type { CreatorsRepo } from '../creators/creators.repo.js';
import { issueApiKey, presentApiKey as presentOwnKey } from '../api-keys/api-keys.service.js';
import type { CreateAdminApiKeyBody, CreateCreatorBody } from './admin.schemas.js';

type CreatorRow = NonNullable<Awaited<ReturnType<CreatorsRepo['findCreator']>>>;
type ApiKeyRow = Awaited<ReturnType<CreatorsRepo['insertApiKey']>>;

export const presentCreator = (c: CreatorRow) => ({
  id: c.id,
  name: c.name,
  email: c.email,
  processor_account_id: c.processor_account_id,
  created_at: iso(c.created_at),
});

/** The operator's view of a key: the creator's (api-keys.service), and whose it is. */
export const presentApiKey = (k: ApiKeyRow) => ({ ...presentOwnKey(k), creator_id: k.creator_id });

export interface AdminDeps {
  db: Db;
  creators: CreatorsRepo;
  processor: Processor;
  /** Keeps the new account's state as the processor answered its creation (account/account-sync.ts). */
  accounts: Pick<AccountSync, 'nextSeq' | 'applyCreated'>;
  logger?: Logger;
}

export type CreatedApiKey = ReturnType<typeof presentApiKey> & { api_key: string | null };

export interface CreatedCreator {
  creator: ReturnType<typeof presentCreator>;
  /** Null in the stored answer (a replay): secrets are never stored. */
  api_key: string | null;
  api_key_id: string;
}

const emailTaken = (email: string) =>
  new AppError('email_taken', `A creator with e-mail ${email} already exists.`, [{ field: 'email', message: 'is already taken' }]);

export function createAdminService({ db, creators, processor, accounts, logger }: AdminDeps) {
  return {
    /**
     * A creator, its connected account at the processor and its first API key. The account
     * is opened first (outside any transaction), then the creator and key are written
     * together with the stored answer, or not at all. With an Idempotency-Key the creator id
     * and the processor's key derive from it, so a retry after any failure finds the account
     * the first attempt opened; without one, a failed write closes the account it opened.
     */
    async createCreator(input: CreateCreatorBody, answer?: KeyedAnswer<CreatedCreator>) {
      const email = input.email.trim();
      const name = input.name.trim();
      if (await creators.findCreatorByEmail(email)) throw emailTaken(email);
      const creatorId = answer?.idFor('creator') ?? newId();
      const seq = await accounts.nextSeq();
      const account = await processor.createConnectedAccount({ creatorId, email, name });
      const accountId = account.id;
      const key = generateApiKey();
      try {
        return await inTransaction(db, answer, async (trx): Promise<CreatedCreator> => {
          const creator = await creators.insertCreator({ id: creatorId, name, email, processor_account_id: accountId }, trx);
          // A new account cannot take charges until the creator onboards (GET /api/v1/account).
          await accounts.applyCreated(trx, seq, account);
          const apiKey = await creators.insertApiKey(creatorId, { id: newId(), key_hash: key.hash, prefix: key.prefix }, trx);
          return { creator: presentCreator(creator), api_key: key.key, api_key_id: apiKey.id };
        });
      } catch (err) {
        if (!answer) await processor.deleteConnectedAccount(accountId).catch((e: unknown) => logger?.warn({ err: e, accountId }, 'could not close an orphaned account'));
        if (uniqueViolation(err) === 'creators_email_key') throw emailTaken(email);
        throw err;
      }
    },

    /** Within the creator's live-key cap, like the creator's own route; `full` unless told otherwise. */
    async createApiKey(creatorId: string, input: CreateAdminApiKeyBody, answer?: KeyedAnswer<CreatedApiKey>) {
      return inTransaction(db, answer, async (trx) => {
        const issued = await issueApiKey(creators, trx, creatorId, { name: input.name?.trim() ?? null, scope: input.scope ?? 'full' });
        if (!issued) throw notFound('Creator');
        return { ...presentApiKey(issued.row), api_key: issued.secret };
      });
    },

    async listApiKeys(creatorId: string) {
      const creator = await creators.findCreator(creatorId);
      if (!creator) throw notFound('Creator');
      return (await creators.listApiKeys(creatorId)).map(presentApiKey);
    },

    async revokeApiKey(keyId: string) {
      const row = await creators.revokeApiKey(keyId);
      if (!row) throw notFound('API key');
      return presentApiKey(row);
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
