/**
 * An amount typed in major units ("125", "125.5", "1,250.75", "125,50") as integer cents,
 * read digit by digit: multiplying a float by 100 turns 0.29 into 28.999…, and the API takes
 * cents. Null when the text is not an amount with at most two decimals. The last "." or ","
 * followed by one or two digits is the decimal mark; other separators group thousands.
 */
export function centsOf(text: string): number | null {
  const compact = text.trim().replace(/[\s\u00a0']/g, '');
  const match = /^(\d{1,3}(?:[.,]\d{3})*|\d+)(?:[.,](\d{1,2}))?$/.exec(compact);
  if (!match) return null;
  const whole = Number(match[1]!.replace(/[.,]/g, ''));
  const fraction = Number((match[2] ?? '').padEnd(2, '0'));
  const cents = whole * 100 + fraction;
  return Number.isSafeInteger(cents) ? cents : null;
}
