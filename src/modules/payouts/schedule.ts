/**
 * When the next automatic payout happens, from the account's schedule (Stripe pays out at
 * the start of the UTC day): daily → tomorrow; weekly → the next anchor weekday; monthly →
 * the next anchor day, clamped to the month's last day. Manual schedules have none.
 */
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

const startOfUtcDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

export function nextAutoPayoutAt(
  interval: string | null,
  anchor: { weekly_anchor?: string; monthly_anchor?: number } | null,
  now: Date,
): Date | null {
  const tomorrow = addDays(startOfUtcDay(now), 1);
  switch (interval) {
    case 'daily':
      return tomorrow;
    case 'weekly': {
      const target = WEEKDAYS.indexOf(anchor?.weekly_anchor ?? 'monday');
      const ahead = (target - tomorrow.getUTCDay() + 7) % 7;
      return addDays(tomorrow, ahead);
    }
    case 'monthly': {
      const day = anchor?.monthly_anchor ?? 1;
      for (let m = 0; m < 3; m++) {
        const year = tomorrow.getUTCFullYear();
        const month = tomorrow.getUTCMonth() + m;
        const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
        const candidate = new Date(Date.UTC(year, month, Math.min(day, last)));
        if (candidate >= tomorrow) return candidate;
      }
      return null;
    }
    default:
      return null;
  }
}

/** The anchor fields of a processor payout schedule, as kept on the creator (`payout_schedule_anchor`). */
export function anchorOf(schedule: { weekly_anchor?: string | null; monthly_anchor?: number | null } | undefined): Record<string, string | number> {
  return {
    ...(schedule?.weekly_anchor ? { weekly_anchor: schedule.weekly_anchor } : {}),
    ...(schedule?.monthly_anchor ? { monthly_anchor: schedule.monthly_anchor } : {}),
  };
}
