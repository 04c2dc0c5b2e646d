import { isDeepStrictEqual } from 'node:util';

/**
 * `previous_attributes` of an `*.updated` event (Stripe's convention): the fields of `before`
 * whose value differs in `after`, with the value they had.
 */
export function previousAttributes<T extends Record<string, unknown>>(before: T, after: T): Partial<T> {
  const changed: Partial<T> = {};
  for (const key of Object.keys(after) as Array<keyof T>) {
    if (!isDeepStrictEqual(before[key], after[key])) changed[key] = before[key];
  }
  return changed;
}
