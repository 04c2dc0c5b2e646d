import type { Schemas } from '../api/types.js';

export type Community = Schemas['Community'];
export type Tier = Schemas['Tier'];

/** The API's category keys (Portuguese, as Tribes started in Brazil) in the creator's words. */
export const CATEGORY: Record<Community['category'], string> = {
  musculacao: 'Strength training',
  funcional: 'Functional training',
  yoga: 'Yoga',
  crossfit: 'CrossFit',
  corrida: 'Running',
  nutricao: 'Nutrition',
  outros: 'Other',
};

export const PERIOD: Record<Tier['billing_period'], string> = { monthly: 'month', quarterly: '3 months', yearly: 'year' };
export const PERIOD_LABEL: Record<Tier['billing_period'], string> = { monthly: 'Monthly', quarterly: 'Every 3 months', yearly: 'Yearly' };

/**
 * "29.90" (or "29,90", as Brazilian creators write it) as integer cents, read from the
 * digits themselves: 29.90 * 100 is 2989.9999… in floating point, so the number is never
 * multiplied. Undefined when the text is not an amount with at most two decimals.
 */
export function parseCents(text: string): number | undefined {
  const match = /^\s*(\d{1,9})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** Cents as the text the price field shows ("29.90"): the inverse of parseCents. */
export const centsText = (cents: number): string => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
