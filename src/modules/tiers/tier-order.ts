import type { BillingPeriod } from '../../db/types.js';

/**
 * The order of a community's tiers (DESIGN §7), used by the paywall ("members whose tier
 * equals or exceeds tier_min_id") and by challenge minimums. Pure, so every consumer ranks
 * tiers the same way.
 */
export interface RankableTier {
  id: string;
  price_cents: number;
  billing_period: BillingPeriod;
  level: number | null;
  created_at: Date;
}

const MONTHS: Record<BillingPeriod, number> = { monthly: 1, quarterly: 3, yearly: 12 };

/**
 * Monthly-normalised prices compared exactly (a/m vs b/n as a·n vs b·m), so a yearly 12000
 * and a monthly 1000 tie instead of drifting apart through rounding.
 */
function compareMonthly(a: RankableTier, b: RankableTier): number {
  return a.price_cents * MONTHS[b.billing_period] - b.price_cents * MONTHS[a.billing_period];
}

/**
 * Rank of every tier of one community: higher is better. Without levels, tiers rank by
 * monthly-normalised price, then creation time (each tier its own rank). Once any tier of
 * the community has a level, tiers rank by level alone (none = 0) and equal levels are equal.
 */
export function rankTiers(tiers: RankableTier[]): Map<string, number> {
  if (tiers.some((t) => t.level !== null)) return new Map(tiers.map((t) => [t.id, t.level ?? 0]));
  const ordered = [...tiers].sort((a, b) => compareMonthly(a, b) || a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
  return new Map(ordered.map((t, index) => [t.id, index]));
}

/** Whether holding `heldTierId` satisfies a minimum of `minimumTierId` (null: no minimum). */
export function meetsMinimum(ranks: Map<string, number>, heldTierId: string, minimumTierId: string | null): boolean {
  if (minimumTierId === null) return true;
  const held = ranks.get(heldTierId);
  const minimum = ranks.get(minimumTierId);
  return held !== undefined && minimum !== undefined && held >= minimum;
}

/**
 * The cheapest active tier that satisfies a minimum (the paywall's upgrade offer): by
 * monthly-normalised price, then the tier order. Undefined when no active tier does.
 */
/** Whether any of `heldTierIds` (tiers of the community of `tiers`) equals or exceeds the minimum; with none, any held tier does. */
export function holdsAtLeast(tiers: RankableTier[], heldTierIds: string[], minimumTierId: string | null): boolean {
  const ranks = rankTiers(tiers);
  return heldTierIds.some((held) => meetsMinimum(ranks, held, minimumTierId));
}

export function cheapestMeeting<T extends RankableTier & { is_active: boolean }>(tiers: T[], ranks: Map<string, number>, minimumTierId: string): T | undefined {
  const qualifying = tiers.filter((t) => t.is_active && meetsMinimum(ranks, t.id, minimumTierId));
  return qualifying.sort((a, b) => compareMonthly(a, b) || ranks.get(a.id)! - ranks.get(b.id)!)[0];
}
