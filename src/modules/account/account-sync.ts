import type Stripe from 'stripe';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';
import type { Processor } from '../../processor/processor.js';
import { anchorOf } from '../payouts/schedule.js';
import type { AccountRepo } from './account.repo.js';
import { stateOf } from './status.js';

/**
 * The account mirror, written only from what the processor says now (an event's payload may
 * be old). Reads are ordered by the sequence every mirrored object shares, taken before the
 * read, so an older read never overwrites a newer one.
 */
export function createAccountSync(deps: { db: Db; processor: Processor; accounts: AccountRepo; nextSeq: () => Promise<number> }) {
  const { db, processor, accounts, nextSeq } = deps;

  const valuesOf = (account: Stripe.Account) => {
    const schedule = account.settings?.payouts?.schedule;
    return { ...stateOf(account), payout_schedule: schedule?.interval ?? null, payout_schedule_anchor: anchorOf(schedule) };
  };

  async function read(account: string) {
    const seq = await nextSeq();
    const fresh = await processor.retrieveAccount(account);
    return (trx: Executor) => accounts.apply(trx, account, seq, valuesOf(fresh));
  }

  return {
    nextSeq,
    /** Re-reads the account; the write is left to the caller's transaction (an event's). */
    read,
    /** Re-reads the account and writes it now; true when the stored state was older. */
    async refresh(account: string): Promise<boolean> {
      const write = await read(account);
      return db.transaction().execute(write);
    },
    /** The account as the processor answered its creation, read at `seq` (taken before the call). */
    applyCreated: (trx: Executor, seq: number, account: Stripe.Account) => accounts.apply(trx, account.id, seq, valuesOf(account)),
  };
}

export type AccountSync = ReturnType<typeof createAccountSync>;
