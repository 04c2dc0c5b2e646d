import { periodBoundary } from './calendar.js';
import { invalidRequest, missingParam, StripeError } from './errors.js';
import { changed, emit } from './events.js';
import type { Params } from './params.js';
import { compatiblePrice, PRORATION_BEHAVIORS } from './plan-change.js';
import { firstPeriodEnd, sameInterval, switchPrice } from './sub-period.js';
import { findObject, getObject, insertObject, listObjects, newId, saveObject, type Ctx, type Stored } from './store.js';

/**
 * Subscription Schedules, the subset a paid community needs: a schedule made from an existing
 * subscription (phase 0 = its current period at its price), and at most one next phase of one
 * iteration at another price of the same currency (any interval) — "change at period end". The
 * renewal job (subscriptions.ts runCycle) calls advanceSchedule at each period boundary.
 */

/** Stripe's refusal of direct changes to what a schedule manages. */
export const managedBy = (schedule: string, what: 'cancelation behavior' | 'items'): StripeError =>
  invalidRequest(`The subscription is managed by the subscription schedule \`${schedule}\`, and updating any ${what} directly is not allowed. Please update the schedule instead.`);

const phaseOf = (sub: any, price: any, start: number, end: number, prorationBehavior: string) => ({
  add_invoice_items: [],
  application_fee_percent: sub.application_fee_percent,
  automatic_tax: { disabled_reason: null, enabled: false, liability: null },
  billing_cycle_anchor: null,
  billing_thresholds: null,
  collection_method: null,
  currency: price.currency,
  default_payment_method: null,
  default_tax_rates: [],
  description: null,
  discounts: [],
  end_date: end,
  invoice_settings: null,
  items: [{ billing_thresholds: null, discounts: [], metadata: {}, plan: price.id, price: price.id, quantity: 1, tax_rates: [] }],
  metadata: {},
  on_behalf_of: null,
  proration_behavior: prorationBehavior,
  start_date: start,
  transfer_data: null,
  trial_end: sub.status === 'trialing' ? sub.trial_end : null,
});

/** A phase's `application_fee_percent`, which the subscription takes when the phase begins. */
function feePercent(p: Params, phase: number): number | undefined {
  const name = `phases[${phase}][application_fee_percent]`;
  const v = p.decimal(name);
  if (v !== undefined && v > 100) throw invalidRequest('application_fee_percent must be between 0 and 100.', name);
  return v;
}

export const notModifiable = (status: string, verb: string) =>
  invalidRequest(`You cannot ${verb} a subscription schedule that is currently in the \`${status}\` status. It must be in either the \`not_started\` or \`active\` status to be ${verb === 'update' ? 'updated' : `${verb}d`}.`);

/** POST /v1/subscription_schedules `{from_subscription}`. */
export async function createSchedule(ctx: Ctx, p: Params): Promise<unknown> {
  const subId = p.str('from_subscription');
  if (!subId) throw (p.has('customer') || p.has('phases') ? invalidRequest('The simulator creates subscription schedules from an existing subscription only: pass from_subscription.', 'from_subscription') : missingParam('from_subscription'));
  const sub = await getObject(ctx, subId, 'subscription', { param: 'from_subscription' });
  const d = sub.data;
  if (d.status === 'canceled') throw invalidRequest(`You cannot migrate a subscription that is in the \`canceled\` status.`, 'from_subscription');
  if (d.schedule) throw invalidRequest(`You cannot migrate a subscription that is already attached to a schedule: \`${d.schedule}\`.`, 'from_subscription');
  if (d.cancel_at_period_end) throw invalidRequest('You cannot migrate a subscription that is set to cancel at the end of its period; set cancel_at_period_end to false first.', 'from_subscription');
  const item = d.items.data[0];
  const phase = phaseOf(d, item.price, item.current_period_start, item.current_period_end, 'create_prorations');
  const data = {
    id: newId('sub_sched'),
    object: 'subscription_schedule',
    application: null,
    billing_mode: { flexible: null, type: 'classic' },
    canceled_at: null as number | null,
    completed_at: null as number | null,
    created: ctx.now,
    current_phase: { end_date: phase.end_date, start_date: phase.start_date } as { end_date: number; start_date: number } | null,
    customer: d.customer,
    customer_account: null,
    default_settings: {
      application_fee_percent: d.application_fee_percent,
      automatic_tax: { disabled_reason: null, enabled: false, liability: null },
      billing_cycle_anchor: 'automatic',
      billing_thresholds: null,
      collection_method: 'charge_automatically',
      default_payment_method: null,
      description: null,
      invoice_settings: { account_tax_ids: null, days_until_due: null, issuer: { type: 'self' } },
      on_behalf_of: null,
      transfer_data: null,
    },
    end_behavior: 'release',
    livemode: false,
    metadata: p.metadata(),
    phases: [phase] as any[],
    released_at: null as number | null,
    released_subscription: null as string | null,
    status: 'active',
    subscription: sub.id as string | null,
    test_clock: null,
  };
  await insertObject(ctx, 'subscription_schedule', data, { phase: 0 });
  await emit(ctx, 'subscription_schedule.created', data);
  const before = structuredClone(d);
  d.schedule = data.id;
  await saveObject(ctx, sub);
  await emit(ctx, 'customer.subscription.updated', d, changed(before, d));
  return data;
}

/**
 * POST /v1/subscription_schedules/{id}: phase 0 stays the current period at the current
 * price (its dates and price may be restated, not changed); phase 1, if given, is one
 * billing period of another price of the same currency from the current period's end, counted
 * in that price's own interval.
 */
export async function updateSchedule(ctx: Ctx, id: string, p: Params): Promise<unknown> {
  const sched = await getObject(ctx, id, 'subscription_schedule', { param: 'id', noun: 'subscription_schedule' });
  const s = sched.data;
  if (s.status !== 'active') throw notModifiable(s.status, 'update');
  const sub = await getObject(ctx, s.subscription, 'subscription', { param: 'subscription' });
  const before = structuredClone(s);
  const behavior = p.enumOf('proration_behavior', PRORATION_BEHAVIORS);
  const endBehavior = p.enumOf('end_behavior', ['release', 'cancel'] as const);
  if (endBehavior) s.end_behavior = endBehavior;
  const phases = p.list('phases');
  if (phases) {
    if (phases.length > 2) throw invalidRequest('The simulator supports at most two phases: the current one and the next.', 'phases');
    const current = s.phases[0];
    const price0 = p.str('phases[0][items][0][price]');
    if (price0 && price0 !== current.items[0].price) {
      throw invalidRequest('The simulator keeps the current phase at the subscription\'s price; change it now with POST /v1/subscriptions/{id} items instead.', 'phases[0][items][0][price]');
    }
    const start0 = p.int('phases[0][start_date]');
    if (start0 !== undefined && start0 !== current.start_date) throw invalidRequest('You can not modify the start date of the current phase.', 'phases[0][start_date]');
    const end0 = p.int('phases[0][end_date]');
    if (end0 !== undefined && end0 !== current.end_date) {
      throw invalidRequest(`The simulator ends the current phase at the current period's end (${current.end_date}).`, 'phases[0][end_date]');
    }
    if (behavior) current.proration_behavior = behavior;
    current.application_fee_percent = feePercent(p, 0) ?? current.application_fee_percent;
    s.phases = [current];
    if (phases.length === 2) {
      const priceId = p.str('phases[1][items][0][price]');
      if (!priceId) throw missingParam('phases[1][items][0][price]');
      const price = await compatiblePrice(ctx, sub.data, priceId, 'phases[1][items][0][price]');
      const r = price.recurring;
      // Same interval: the next period from the billing anchor; another: one new interval from the phase's start.
      const end = sameInterval(price, sub.data.items.data[0].price)
        ? periodBoundary(Number(sub.internal.anchor), r.interval, r.interval_count, Number(sub.internal.cycle) + 1)
        : firstPeriodEnd(price, current.end_date);
      // One period at the new price, however it is said: iterations (older API versions), duration or end_date.
      const iterations = p.int('phases[1][iterations]', { min: 1 });
      if (iterations !== undefined && iterations !== 1) throw invalidRequest('The simulator supports a next phase of one iteration only.', 'phases[1][iterations]');
      const interval = p.str('phases[1][duration][interval]');
      const count = p.int('phases[1][duration][interval_count]', { min: 1 }) ?? 1;
      if (interval !== undefined && (interval !== r.interval || count !== r.interval_count)) {
        throw invalidRequest(`The simulator supports a next phase of one billing period only (${r.interval_count} ${r.interval}).`, 'phases[1][duration]');
      }
      const endDate = p.int('phases[1][end_date]');
      if (endDate !== undefined && endDate !== end) throw invalidRequest(`The simulator supports a next phase of one billing period only, ending at ${end}.`, 'phases[1][end_date]');
      const next = phaseOf(sub.data, price, current.end_date, end, behavior ?? 'create_prorations');
      next.application_fee_percent = feePercent(p, 1) ?? next.application_fee_percent;
      s.phases.push(next);
    }
  }
  s.metadata = p.metadata(s.metadata);
  await saveObject(ctx, sched);
  const prev = changed(before, s);
  if (Object.keys(prev).length) await emit(ctx, 'subscription_schedule.updated', s, prev);
  return s;
}

/** Detaches the schedule: the subscription goes on as it is now. The caller saves the subscription and emits its update. */
async function release(ctx: Ctx, sched: Stored, sub: Stored): Promise<void> {
  Object.assign(sched.data, { status: 'released', released_at: ctx.now, released_subscription: sub.id, subscription: null, current_phase: null });
  sub.data.schedule = null;
  await saveObject(ctx, sched);
  await emit(ctx, 'subscription_schedule.released', sched.data);
}

/** POST /v1/subscription_schedules/{id}/release. */
export async function releaseSchedule(ctx: Ctx, id: string): Promise<unknown> {
  const sched = await getObject(ctx, id, 'subscription_schedule', { param: 'id', noun: 'subscription_schedule' });
  if (sched.data.status !== 'active') throw notModifiable(sched.data.status, 'release');
  const sub = await getObject(ctx, sched.data.subscription, 'subscription', { param: 'subscription' });
  const before = structuredClone(sub.data);
  await release(ctx, sched, sub);
  await saveObject(ctx, sub);
  await emit(ctx, 'customer.subscription.updated', sub.data, changed(before, sub.data));
  return sched.data;
}

/** A subscription attached to a schedule has ended: the schedule is canceled with it. */
export async function scheduleOfEndedSubscription(ctx: Ctx, sub: Stored): Promise<void> {
  const sched = await findObject(ctx, sub.data.schedule, { type: 'subscription_schedule', forUpdate: true });
  if (!sched || sched.data.status !== 'active') return;
  Object.assign(sched.data, { status: 'canceled', canceled_at: ctx.now, current_phase: null });
  await saveObject(ctx, sched);
  await emit(ctx, 'subscription_schedule.canceled', sched.data);
}

/**
 * At a period boundary (ctx.now): if the next phase starts, the subscription takes its price
 * before the renewal is invoiced; a last phase starting with `end_behavior: release` releases
 * the schedule. 'cancel' means the last phase has ended with `end_behavior: cancel`.
 */
export async function advanceSchedule(ctx: Ctx, sub: Stored): Promise<'cancel' | void> {
  const sched = await findObject(ctx, sub.data.schedule, { type: 'subscription_schedule', forUpdate: true });
  if (!sched || sched.data.status !== 'active') return;
  const s = sched.data;
  const i = Number(sched.internal.phase ?? 0);
  if (s.phases[i].end_date > ctx.now) return;
  const before = structuredClone(sub.data);
  const next = s.phases[i + 1];
  if (!next) {
    if (s.end_behavior === 'cancel') {
      Object.assign(s, { status: 'completed', completed_at: ctx.now, current_phase: null });
      await saveObject(ctx, sched);
      await emit(ctx, 'subscription_schedule.completed', s);
      return 'cancel';
    }
    await release(ctx, sched, sub);
  } else {
    const price = (await getObject(ctx, next.items[0].price, 'price', { param: 'phases' })).data;
    if (!sameInterval(price, sub.data.items.data[0].price)) {
      // Another interval: the billing cycle restarts at the phase's start, so the renewal opens one new interval.
      Object.assign(sub.internal, { anchor: next.start_date, cycle: 0 });
      sub.data.billing_cycle_anchor = next.start_date;
    }
    switchPrice(sub.data, price);
    if (next.application_fee_percent !== null) sub.data.application_fee_percent = next.application_fee_percent;
    sched.internal.phase = i + 1;
    const phaseBefore = s.current_phase;
    s.current_phase = { end_date: next.end_date, start_date: next.start_date };
    await saveObject(ctx, sched);
    await emit(ctx, 'subscription_schedule.updated', s, { current_phase: phaseBefore });
    if (i + 1 === s.phases.length - 1 && s.end_behavior === 'release') await release(ctx, sched, sub);
  }
  await saveObject(ctx, sub);
  await emit(ctx, 'customer.subscription.updated', sub.data, changed(before, sub.data));
}

export function listSchedules(ctx: Ctx, p: Params) {
  const customer = p.str('customer');
  return listObjects(ctx, 'subscription_schedule', p, { url: '/v1/subscription_schedules', ...(customer ? { where: [[['customer'], customer]] } : {}) });
}
