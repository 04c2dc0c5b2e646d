import { sql } from 'kysely';
import { deleteInRounds } from '../../db/purge.js';
import type { Executor } from '../../db/tx.js';
import type { AccountState } from './status.js';

/**
 * The creator's processor account as Tribes keeps it (columns of `creators`, migration 0021),
 * and the tokens of onboarding links' refresh and return URLs. Creator id first, except where
 * the processor names the account (its events).
 */
export function createAccountRepo(db: Executor) {
  return {
    async find(creatorId: string, trx: Executor = db) {
      return trx
        .selectFrom('creators')
        .select([
          'processor_account_id',
          'charges_enabled',
          'payouts_enabled',
          'details_submitted',
          'account_requirements',
          'payout_schedule',
          'payout_schedule_anchor',
          'account_synced_at',
        ])
        .where('id', '=', creatorId)
        .executeTakeFirst();
    },

    /**
     * Writes what the processor said of `account` at read `seq`, unless a newer read is stored
     * already (the row's update re-checks the condition after any concurrent writer commits).
     */
    async apply(
      trx: Executor,
      account: string,
      seq: number,
      state: AccountState & { payout_schedule: string | null; payout_schedule_anchor: Record<string, unknown> },
    ): Promise<boolean> {
      const result = await trx
        .updateTable('creators')
        .set({
          charges_enabled: state.charges_enabled,
          payouts_enabled: state.payouts_enabled,
          details_submitted: state.details_submitted,
          account_requirements: JSON.stringify(state.requirements),
          payout_schedule: state.payout_schedule,
          payout_schedule_anchor: JSON.stringify(state.payout_schedule_anchor),
          account_synced_seq: seq,
          account_synced_at: new Date(),
          updated_at: new Date(),
        })
        .where('processor_account_id', '=', account)
        .where((eb) => eb.or([eb('account_synced_seq', 'is', null), eb('account_synced_seq', '<', seq)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async insertLinkToken(creatorId: string, token: { id: string; token_hash: Buffer; expires_at: Date }, trx: Executor = db) {
      await trx.insertInto('account_link_tokens').values({ ...token, creator_id: creatorId }).execute();
    },

    /** Spends a refresh token once: the creator it was made for, if it was live and unspent. */
    async spendLinkToken(hash: Buffer, trx: Executor = db): Promise<string | undefined> {
      const row = await trx
        .updateTable('account_link_tokens')
        .set({ used_at: new Date() })
        .where('token_hash', '=', hash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', new Date())
        .returning('creator_id')
        .executeTakeFirst();
      return row?.creator_id;
    },

    /** The creator a return URL's token was made for, while it is kept (spent or not). */
    async creatorOfLinkToken(hash: Buffer, since: Date): Promise<string | undefined> {
      const row = await db.selectFrom('account_link_tokens').select('creator_id').where('token_hash', '=', hash).where('created_at', '>', since).executeTakeFirst();
      return row?.creator_id;
    },

    /** Tokens a day past their expiry, in bounded rounds. */
    purgeLinkTokens: (): Promise<number> => deleteInRounds(db, 'account_link_tokens', sql`expires_at < now() - interval '1 day'`, 'expires_at'),
  };
}

export type AccountRepo = ReturnType<typeof createAccountRepo>;
