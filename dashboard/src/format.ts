/** How figures read on every screen: one formatter each, in the browser's locale. */

export function money(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
}

/** Money for chart axes: R$2.6K. */
export function moneyShort(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase(), notation: 'compact', maximumFractionDigits: 1 }).format(cents / 100);
}

export const count = (n: number): string => new Intl.NumberFormat().format(n);

/** A 0–1 fraction as a percentage with one decimal. */
export const percent = (fraction: number): string =>
  new Intl.NumberFormat(undefined, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(fraction);

export const date = (iso: string | null | undefined): string =>
  iso ? new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }).format(new Date(iso)) : '—';

export const dateTime = (iso: string | null | undefined): string =>
  iso ? new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)) : '—';

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });

/**
 * A time near now as it reads to a person watching: seconds below a minute ("in 5 sec.",
 * "12 sec. ago", "now"), minutes below an hour ("in 4 min."), else `dateTime`.
 */
export function nearTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (Math.abs(seconds) < 60) return relative.format(seconds, 'second');
  const minutes = Math.round(seconds / 60);
  if (Math.abs(minutes) < 60) return relative.format(minutes, 'minute');
  return dateTime(iso);
}

/** "+12", "−3", "0": a change with its sign, for the figures' change over a window. */
export function signed(n: number, show: (n: number) => string = count): string {
  if (n === 0) return show(0);
  return `${n > 0 ? '+' : '−'}${show(Math.abs(n))}`;
}

/** The day `days` ago as YYYY-MM-DD (UTC, as the metrics history counts days). */
export function daysAgo(days: number, from = new Date()): string {
  return new Date(from.getTime() - days * 86_400_000).toISOString().slice(0, 10);
}
