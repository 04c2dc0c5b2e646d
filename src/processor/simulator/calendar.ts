/**
 * Calendar arithmetic on the simulator clock (unix seconds, UTC), Stripe's way: billing
 * periods are counted from the billing cycle anchor, not chained from the previous period,
 * so an anchor on Jan 31 bills Feb 28 (29), then Mar 31 — the day clamps to the end of a
 * short month but springs back afterwards.
 */
export const DAY = 86_400;

export type Interval = 'day' | 'week' | 'month' | 'year';

function addMonthsClamped(anchor: number, months: number): number {
  const d = new Date(anchor * 1000);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const targetYear = y + Math.floor(m / 12);
  const targetMonth = ((m % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  const day = Math.min(d.getUTCDate(), lastDay);
  return (
    Date.UTC(targetYear, targetMonth, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()) / 1000
  );
}

/** End of the `cycle`-th period (1-based) of a recurring price starting at `anchor`. */
export function periodBoundary(anchor: number, interval: Interval, intervalCount: number, cycle: number): number {
  const n = intervalCount * cycle;
  switch (interval) {
    case 'day':
      return anchor + n * DAY;
    case 'week':
      return anchor + n * 7 * DAY;
    case 'month':
      return addMonthsClamped(anchor, n);
    case 'year':
      return addMonthsClamped(anchor, 12 * n);
  }
}

export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface PayoutSchedule {
  interval: 'daily' | 'weekly' | 'monthly' | 'manual';
  weekly_anchor?: Weekday | undefined;
  monthly_anchor?: number | undefined;
}

/** Start (00:00 UTC) of the day containing `t`. */
export const startOfDay = (t: number): number => Math.floor(t / DAY) * DAY;

/**
 * The next automatic payout time strictly after `after`: midnight UTC of the next day the
 * schedule pays on. A monthly anchor past the month's end pays on its last day, as Stripe does.
 */
export function nextPayoutTime(after: number, schedule: PayoutSchedule): number | null {
  if (schedule.interval === 'manual') return null;
  let day = startOfDay(after) + DAY;
  for (let i = 0; i < 400; i++, day += DAY) {
    const d = new Date(day * 1000);
    if (schedule.interval === 'daily') return day;
    if (schedule.interval === 'weekly' && WEEKDAYS[d.getUTCDay()] === (schedule.weekly_anchor ?? 'monday')) return day;
    if (schedule.interval === 'monthly') {
      const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
      if (d.getUTCDate() === Math.min(schedule.monthly_anchor ?? 1, lastDay)) return day;
    }
  }
  return null;
}
