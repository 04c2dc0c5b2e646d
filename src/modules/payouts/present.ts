import { iso, isoOrNull } from '../../db/tx.js';
import type { PayoutStatus } from '../../db/types.js';

/** A payout as the creator API answers it (and as the payout events carry it). */
type PayoutRow = { id: string; amount_cents: number; currency: string; status: PayoutStatus; method: 'automatic' | 'manual'; arrival_date: Date | null; failure_reason: string | null; processor_payout_id: string; created_at: Date | string };

export const presentPayout = (p: PayoutRow) => ({
  id: p.id,
  amount_cents: Number(p.amount_cents),
  currency: p.currency,
  status: p.status,
  method: p.method,
  arrival_date: isoOrNull(p.arrival_date),
  failure_reason: p.failure_reason,
  processor_payout_id: p.processor_payout_id,
  created_at: iso(p.created_at),
});

export type Payout = ReturnType<typeof presentPayout>;
