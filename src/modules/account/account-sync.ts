import type Stripe from 'stripe';
import type { Db } from '../../db/client.js';
import type { Executor } from '../../db/tx.js';
import type { Processor } from '../../processor/processor.js';
import { anchorOf } from '../payouts/schedule.js';
import type { AccountRepo } from './account.repo.js';
import { recordEvents } from '../events/outbox.js';
import { previousAttributes } from '../events/previous.js';
import { stateOf, statusOf, type AccountState } from './status.js';

const NO_REQUIREMENTS: AccountState['requirements'] = { currently_due: [], eventually_due: [], past_due: [], pending_verification: [], current_deadline: null, disabled_reason: null };

/** What account.updated carries (catalog/billing.ts): the status and what decides it. */
const eventFields = (state: AccountState) => ({
  status: statusOf(state),
  charges_enabled: state.charges_enabled,
  payouts_enabled: state.payouts_enabled,
  details_submitted: state.details_submitted,
  currently_due: state.requirements.currently_due,
  past_due: state.requirements.past_due,
  current_deadline: state.requirements.current_deadline,
  disabled_reason: state.requirements.disabled_reason,
});

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

  /**
   * Writes a read and, when it changed what the creator sees of the account, records
   * account.updated in the same transaction (an unchanged re-read sends nothing).
   */
  async function apply(trx: Executor, account: string, seq: number, fresh: Stripe.Account): Promise<boolean> {
    const values = valuesOf(fresh);
    const before = await trx
      .selectFrom('creators')
      .select(['id', 'charges_enabled', 'payouts_enabled', 'details_submitted', 'account_requirements'])
      .where('processor_account_id', '=', account)
      .forUpdate()
      .executeTakeFirst();
    const applied = await accounts.apply(trx, account, seq, values);
    if (!applied || !before) return applied;
    const old = eventFields({
      charges_enabled: before.charges_enabled === true,
      payouts_enabled: before.payouts_enabled === true,
      details_submitted: before.details_submitted === true,
      requirements: { ...NO_REQUIREMENTS, ...(before.account_requirements ?? {}) },
    });
    const now = eventFields(values);
    const previous = previousAttributes(old, now);
    if (Object.keys(previous).length > 0) await recordEvents(trx, before.id, [{ type: 'account.updated', data: { ...now, previous_attributes: previous } }]);
    return applied;
  }

  async function read(account: string) {
    const seq = await nextSeq();
    const fresh = await processor.retrieveAccount(account);
    return (trx: Executor) => apply(trx, account, seq, fresh);
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
    applyCreated: (trx: Executor, seq: number, account: Stripe.Account) => apply(trx, account.id, seq, account),
  };
}

export type AccountSync = ReturnType<typeof createAccountSync>;
