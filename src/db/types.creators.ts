import type { ColumnType } from 'kysely';
import type { Defaulted, NullableTimestamp, Timestamp } from './column-types.js';

/** The tenants: creators, their processor account as kept (migration 0021), their API keys, link tokens and dashboard sessions. */

export interface CreatorsTable {
  id: string;
  name: string;
  email: string;
  processor_account_id: string | null;
  payout_schedule: string | null;
  payout_schedule_anchor: ColumnType<{ weekly_anchor?: string; monthly_anchor?: number } | null, string | null | undefined, string | null>;
  balance_txn_cursor: ColumnType<string | null, string | null | undefined, string | null>;
  /** The processor account's state (migration 0021); null until first read from the processor. */
  charges_enabled: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  payouts_enabled: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  details_submitted: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  account_requirements: ColumnType<AccountRequirements | null, string | null | undefined, string | null>;
  account_synced_seq: ColumnType<string | number | null, number | null | undefined, number | null>;
  account_synced_at: NullableTimestamp;
  /** The customer portal's configuration on the creator's account, made at a member's first visit (migrations/0023). */
  billing_portal_configuration_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** What the processor still requires of a creator's account (Stripe's `requirements`), as stored. */
export interface AccountRequirements {
  currently_due: string[];
  eventually_due: string[];
  past_due: string[];
  pending_verification: string[];
  /** ISO 8601, or null. */
  current_deadline: string | null;
  disabled_reason: string | null;
}

export interface AccountLinkTokensTable {
  id: string;
  creator_id: string;
  token_hash: Uint8Array;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: Defaulted<Date>;
}

export interface ApiKeysTable {
  id: string;
  creator_id: string;
  key_hash: Uint8Array;
  prefix: string;
  created_at: Timestamp;
  revoked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Null for keys issued before names existed (migration 0022). */
  name: ColumnType<string | null, string | null | undefined, string | null>;
  scope: Defaulted<ApiKeyScope>;
  /** To the minute (src/http/auth.ts). */
  last_used_at: NullableTimestamp;
}

/** `full` may do everything; `read` only GET (migration 0022). */
export type ApiKeyScope = 'full' | 'read';

/** One-time sign-in links to the dashboard (migration 0026): the token's digest only. */
export interface DashboardLoginLinksTable {
  id: string;
  creator_id: string;
  token_hash: Uint8Array;
  created_at: Defaulted<Date>;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

/** Dashboard sessions (migration 0026): the cookie token's digest, 12 h idle and 14 days absolute. */
export interface DashboardSessionsTable {
  id: string;
  creator_id: string;
  token_hash: Uint8Array;
  created_at: Defaulted<Date>;
  /** To the minute (src/http/auth.ts). */
  last_seen_at: Defaulted<Date>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  user_agent: ColumnType<string | null, string | null | undefined, string | null>;
}
