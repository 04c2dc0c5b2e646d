import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, isoOrNull, type Executor } from '../../db/tx.js';
import type { AccountRequirements } from '../../db/types.js';
import { randomBase62, sha256 } from '../../http/auth.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import type { Processor } from '../../processor/processor.js';
import type { AccountRepo } from './account.repo.js';
import type { AccountSync } from './account-sync.js';
import { STATUS_MEANINGS, statusOf } from './status.js';

type Row = NonNullable<Awaited<ReturnType<AccountRepo['find']>>>;
type KnownRow = Row & { processor_account_id: string };

/** A refresh URL works for an hour and once; a return URL shows the state for a day. */
const LINK_TOKEN_TTL_MS = 3600_000;
const RETURN_TOKEN_TTL_MS = 24 * 3600_000;

/** Where the processor sends the creator back (PUBLIC_URL + these paths, src/modules/account/account.pages.ts). */
export const ONBOARDING_REFRESH_PATH = '/connect/onboarding/refresh';
export const ONBOARDING_RETURN_PATH = '/connect/onboarding/return';

const NO_REQUIREMENTS: AccountRequirements = { currently_due: [], eventually_due: [], past_due: [], pending_verification: [], current_deadline: null, disabled_reason: null };

export function presentAccount(row: KnownRow) {
  const state = {
    charges_enabled: row.charges_enabled === true,
    payouts_enabled: row.payouts_enabled === true,
    details_submitted: row.details_submitted === true,
    requirements: row.account_requirements ?? NO_REQUIREMENTS,
  };
  const status = statusOf(state);
  return {
    processor_account_id: row.processor_account_id,
    status,
    summary: STATUS_MEANINGS[status],
    ...state,
    payout_schedule: (row.payout_schedule ?? 'daily') as 'daily' | 'weekly' | 'monthly' | 'manual',
    payout_schedule_anchor: row.payout_schedule_anchor ?? {},
    synced_at: isoOrNull(row.account_synced_at),
  };
}

export type Account = ReturnType<typeof presentAccount>;
export interface OnboardingLink {
  /** Null in a replayed answer: links are never stored. */
  url: string | null;
  expires_at: string;
}
export interface DashboardLink {
  url: string | null;
}

export function createAccountService(deps: { db: Db; accounts: AccountRepo; sync: AccountSync; processor: Processor; publicUrl: string }) {
  const { db, accounts, sync, processor, publicUrl } = deps;

  /** The creator's account as kept; read from the processor first if it never was. */
  async function current(creatorId: string): Promise<KnownRow> {
    const row = await accounts.find(creatorId);
    if (!row) throw notFound('Creator');
    if (!row.processor_account_id) throw new AppError('conflict', 'This creator has no payment processor account yet; ask the operator to connect one.');
    if (row.account_synced_at) return row as KnownRow;
    await sync.refresh(row.processor_account_id);
    return (await accounts.find(creatorId)) as KnownRow;
  }

  /**
   * The account, confirmed fresh when the kept state would refuse something: the event that
   * enabled it may simply not have arrived yet, and a creator who just finished onboarding
   * must not lose a member to a late webhook. A yes needs no second read.
   */
  async function confirmed(creatorId: string, allows: (row: KnownRow) => boolean): Promise<KnownRow> {
    const row = await current(creatorId);
    if (allows(row)) return row;
    await sync.refresh(row.processor_account_id);
    return (await accounts.find(creatorId)) as KnownRow;
  }

  /** A link's refresh and return URLs carry a random token made for its creator; only its digest is kept. */
  async function newLink(creatorId: string, account: string) {
    const token = randomBase62(43);
    const q = `?link=${token}`;
    const link = await processor.createOnboardingLink(account, { refreshUrl: `${publicUrl}${ONBOARDING_REFRESH_PATH}${q}`, returnUrl: `${publicUrl}${ONBOARDING_RETURN_PATH}${q}` });
    const keep = (trx: Executor) => accounts.insertLinkToken(creatorId, { id: newId(), token_hash: sha256(token), expires_at: new Date(Date.now() + LINK_TOKEN_TTL_MS) }, trx);
    return { ...link, keep };
  }

  return {
    current,
    confirmed,

    async get(creatorId: string): Promise<Account> {
      return presentAccount(await current(creatorId));
    },

    /** A member may start a checkout only on an account that can take charges. */
    async requireCharges(creatorId: string): Promise<void> {
      const row = await confirmed(creatorId, (r) => r.charges_enabled === true);
      if (row.charges_enabled !== true) {
        throw new AppError('payments_not_enabled', 'The creator has not finished setting up payments, so this community cannot take paying members yet. Try again later.');
      }
    },

    /**
     * A fresh onboarding link. Its refresh and return URLs carry a token made for this creator
     * (stored with the answer, in one transaction); the link itself is never stored or logged.
     */
    async onboardingLink(creatorId: string, answer?: KeyedAnswer<OnboardingLink>): Promise<OnboardingLink> {
      const row = await current(creatorId);
      // The processor first, outside any transaction (no connection held across the call);
      // its token is kept with the stored answer. A failed write leaves a link whose refresh
      // URL finds no token: it then says to ask for a new one.
      const link = await newLink(creatorId, row.processor_account_id);
      return inTransaction(db, answer, async (trx) => {
        await link.keep(trx);
        return { url: link.url, expires_at: iso(new Date(link.expiresAt * 1000)) };
      });
    },

    /** The processor's sign-in link to the creator's own dashboard; only after onboarding was submitted. */
    async dashboardLink(creatorId: string, answer?: KeyedAnswer<DashboardLink>): Promise<DashboardLink> {
      const row = await confirmed(creatorId, (r) => r.details_submitted === true);
      if (row.details_submitted !== true) {
        throw new AppError('onboarding_required', 'The processor dashboard opens once onboarding is submitted: create an onboarding link (POST /api/v1/account/onboarding-link) and finish it first.');
      }
      const url = await processor.createDashboardLink(row.processor_account_id);
      return inTransaction(db, answer, async () => ({ url }));
    },

    /**
     * The processor sent the creator back to a spent or expired link: the token is spent
     * (once) and a new link made with a new one. Undefined when the token is unknown, spent
     * or expired — the page then says to ask for a new link.
     */
    async refreshLink(token: string): Promise<string | undefined> {
      // Spent by one statement: of two visits at once, one gets a link.
      const creatorId = await accounts.spendLinkToken(sha256(token));
      if (!creatorId) return undefined;
      const row = await current(creatorId);
      const link = await newLink(creatorId, row.processor_account_id);
      await link.keep(db);
      return link.url;
    },

    /** The creator left onboarding (done or not): the account is read again, as Stripe's guide says. */
    async returned(token: string): Promise<Account | undefined> {
      const creatorId = await accounts.creatorOfLinkToken(sha256(token), new Date(Date.now() - RETURN_TOKEN_TTL_MS));
      if (!creatorId) return undefined;
      const row = await current(creatorId);
      await sync.refresh(row.processor_account_id);
      return presentAccount((await accounts.find(creatorId)) as KnownRow);
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
