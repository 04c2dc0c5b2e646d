import { periodBoundary, type Interval } from './calendar.js';
import { cancelJobs, scheduleJob, type Ctx, type Stored } from './store.js';

/**
 * A subscription's price and billing period, shared by the renewal (subscriptions.ts), price
 * changes (plan-change.ts, interval-change.ts), schedules and pending updates. The stored
 * subscription keeps `internal.anchor` (the billing cycle anchor periods are counted from) and
 * `internal.cycle` (how many periods from it have begun; 0 before the first, e.g. in a trial).
 */

/** Stripe keeps a pending update for about 23 hours. */
export const PENDING_UPDATE_SECONDS = 23 * 3600;
/** The job that drops a pending update at its `expires_at`. */
export const PENDING_UPDATE_JOB = 'pending_update_expire';

/** The legacy `plan` view of a recurring price, still shown on items and subscriptions. */
export const planOf = (price: any) => ({
  id: price.id,
  object: 'plan',
  active: price.active,
  amount: price.unit_amount,
  amount_decimal: price.unit_amount_decimal,
  billing_scheme: 'per_unit',
  created: price.created,
  currency: price.currency,
  interval: price.recurring.interval,
  interval_count: price.recurring.interval_count,
  livemode: false,
  metadata: price.metadata,
  meter: null,
  nickname: price.nickname,
  product: price.product,
  tiers_mode: null,
  transform_usage: null,
  trial_period_days: null,
  usage_type: 'licensed',
});

/** Puts `price` on the subscription's one item (and its `plan` views). */
export function switchPrice(sub: any, price: any): void {
  const item = sub.items.data[0];
  item.price = price;
  item.plan = planOf(price);
  sub.plan = planOf(price);
}

/** Whether two recurring prices bill on the same interval and interval_count. */
export const sameInterval = (a: any, b: any): boolean =>
  a.recurring.interval === b.recurring.interval && a.recurring.interval_count === b.recurring.interval_count;

/** Sets the current period on the subscription and its item (the 2025+ API keeps it on items). */
export function setPeriod(sub: any, start: number, end: number): void {
  const item = sub.items.data[0];
  item.current_period_start = start;
  item.current_period_end = end;
  // Older API versions read these at the top level; keeping them costs nothing.
  sub.current_period_start = start;
  sub.current_period_end = end;
}

/** The end of the first period of `price` billed from `anchor`. */
export const firstPeriodEnd = (price: any, anchor: number): number =>
  periodBoundary(anchor, price.recurring.interval as Interval, price.recurring.interval_count, 1);

/**
 * Resets the billing cycle anchor to `anchor`, as Stripe does when the interval changes now:
 * the current period becomes [anchor, anchor + one interval of the current price) and the
 * renewal job moves to its end. The caller saves the subscription.
 */
export async function reanchor(ctx: Ctx, sub: Stored, anchor: number): Promise<number> {
  const end = firstPeriodEnd(sub.data.items.data[0].price, anchor);
  sub.data.billing_cycle_anchor = anchor;
  sub.internal.anchor = anchor;
  sub.internal.cycle = 1;
  setPeriod(sub.data, anchor, end);
  await cancelJobs(ctx, sub.id, ['sub_cycle']);
  await scheduleJob(ctx, 'sub_cycle', sub.id, end);
  return end;
}

/**
 * Keeps a declined change (`pending_if_incomplete`) as Stripe's `pending_update`: the new item
 * waits (with the billing cycle anchor it would set, if it resets one) until its open invoice is
 * paid or `expires_at` passes (pending-update.ts). The caller has put the old price back.
 */
export async function holdPendingUpdate(ctx: Ctx, sub: Stored, pendingItem: any, invoiceId: string, anchor: number | null): Promise<void> {
  const expiresAt = ctx.now + PENDING_UPDATE_SECONDS;
  sub.data.pending_update = { billing_cycle_anchor: anchor, expires_at: expiresAt, subscription_items: [pendingItem], trial_end: null, trial_from_plan: null };
  sub.internal.pending_invoice = invoiceId;
  await scheduleJob(ctx, PENDING_UPDATE_JOB, sub.id, expiresAt, { invoice: invoiceId });
}
