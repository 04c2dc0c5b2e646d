import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, startKit, subscribed, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(async () => kit?.close());

const itemOf = (s: Stripe.Subscription) => s.items.data[0]!;
/** `iterations`, which the pinned SDK no longer types (it says `duration`), as older integrations still send it. */
const iterationsOne = (price: string) => ({ items: [{ price }], iterations: 1 }) as unknown as Stripe.SubscriptionScheduleUpdateParams.Phase;

/** A member of a 29.99/month community, and the 19.99/month price they move down to. */
async function memberWithCheaperPrice() {
  const c = await createCreator(kit, { amount: 2999, schedule: 'manual' });
  const sub = await subscribed(kit, c);
  const cheaper = await kit.stripe.prices.create({ product: c.product.id, currency: 'usd', unit_amount: 1999, recurring: { interval: 'month' } }, c.opts);
  return { c, sub, cheaper };
}

describe('subscription schedules', () => {
  it('a downgrade scheduled for the period end switches the price before the renewal is invoiced, then the schedule is released', async () => {
    const { c, sub, cheaper } = await memberWithCheaperPrice();
    const { current_period_start: start, current_period_end: end } = itemOf(sub);
    const schedule = await kit.stripe.subscriptionSchedules.create({ from_subscription: sub.id }, c.opts);
    expect(schedule).toMatchObject({
      object: 'subscription_schedule', status: 'active', end_behavior: 'release', subscription: sub.id, customer: sub.customer,
      current_phase: { start_date: start, end_date: end },
    });
    expect(schedule.phases).toHaveLength(1);
    expect(schedule.phases[0]).toMatchObject({ start_date: start, end_date: end, items: [{ price: c.price.id, quantity: 1 }] });
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).schedule).toBe(schedule.id);

    const updated = await kit.stripe.subscriptionSchedules.update(
      schedule.id,
      {
        end_behavior: 'release',
        proration_behavior: 'none',
        phases: [
          { items: [{ price: c.price.id, quantity: 1 }], application_fee_percent: 10, start_date: start, end_date: end },
          { items: [{ price: cheaper.id, quantity: 1 }], application_fee_percent: 10, duration: { interval: 'month', interval_count: 1 } },
        ],
      },
      c.opts,
    );
    expect(updated.phases.map((p) => [p.items[0]!.price, p.start_date])).toEqual([[c.price.id, start], [cheaper.id, end]]);
    expect(updated.phases[1]!.end_date).toBeGreaterThan(end);
    expect((await kit.stripe.subscriptionSchedules.list({ customer: sub.customer as string }, c.opts)).data.map((s) => s.id)).toEqual([schedule.id]);

    await kit.advance(end - (await kit.now()) + 60);
    const renewed = await kit.stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] }, c.opts);
    expect(itemOf(renewed).price.id).toBe(cheaper.id);
    expect(renewed).toMatchObject({ status: 'active', schedule: null });
    expect(renewed.latest_invoice).toMatchObject({ billing_reason: 'subscription_cycle', total: 1999, amount_paid: 1999 });
    const charge = (await kit.stripe.charges.list({ customer: sub.customer as string }, c.opts)).data[0]!;
    expect(charge).toMatchObject({ amount: 1999, application_fee_amount: 200 });
    const released = await kit.stripe.subscriptionSchedules.retrieve(schedule.id, {}, c.opts);
    expect(released).toMatchObject({ status: 'released', released_subscription: sub.id, subscription: null, released_at: end });
    for (const type of ['subscription_schedule.created', 'subscription_schedule.released']) {
      expect(kit.receiver.ofType(type, (s) => s.id === schedule.id)).toHaveLength(1);
    }
    // One update from the API call, one when the next phase began.
    const phaseUpdates = kit.receiver.ofType('subscription_schedule.updated', (s) => s.id === schedule.id);
    expect(phaseUpdates).toHaveLength(2);
    expect(phaseUpdates.map((e) => e.data.previous_attributes.current_phase)).toContainEqual({ start_date: start, end_date: end });
    const switched = kit.receiver.ofType('customer.subscription.updated', (s) => s.id === sub.id && s.plan?.id === cheaper.id && s.items.data[0].current_period_start === start);
    expect(switched).toHaveLength(1);
    expect(switched[0]!.data.previous_attributes.plan.id).toBe(c.price.id);
  });

  it('releasing keeps the current price, and only then may the subscription be set to cancel at period end', async () => {
    const { c, sub, cheaper } = await memberWithCheaperPrice();
    const schedule = await kit.stripe.subscriptionSchedules.create({ from_subscription: sub.id }, c.opts);
    await kit.stripe.subscriptionSchedules.update(schedule.id, { phases: [{ items: [{ price: c.price.id }], start_date: itemOf(sub).current_period_start, end_date: itemOf(sub).current_period_end }, iterationsOne(cheaper.id)] }, c.opts);
    await expect(kit.stripe.subscriptions.update(sub.id, { cancel_at_period_end: true }, c.opts)).rejects.toMatchObject({
      statusCode: 400,
      message: `The subscription is managed by the subscription schedule \`${schedule.id}\`, and updating any cancelation behavior directly is not allowed. Please update the schedule instead.`,
    });
    await expect(kit.stripe.subscriptionSchedules.create({ from_subscription: sub.id }, c.opts)).rejects.toMatchObject({ statusCode: 400 });
    const released = await kit.stripe.subscriptionSchedules.release(schedule.id, {}, c.opts);
    expect(released).toMatchObject({ status: 'released', subscription: null, released_subscription: sub.id });
    await expect(kit.stripe.subscriptionSchedules.release(schedule.id, {}, c.opts)).rejects.toMatchObject({ statusCode: 400 });
    const after = await kit.stripe.subscriptions.update(sub.id, { cancel_at_period_end: true }, c.opts);
    expect(after).toMatchObject({ schedule: null, cancel_at_period_end: true });
    expect(itemOf(after).price.id).toBe(c.price.id);
    await expect.poll(() => kit.receiver.ofType('subscription_schedule.released', (s) => s.id === schedule.id).length).toBe(1);
  });

  it('canceling the schedule cancels the subscription now', async () => {
    const { c, sub } = await memberWithCheaperPrice();
    const schedule = await kit.stripe.subscriptionSchedules.create({ from_subscription: sub.id }, c.opts);
    const canceled = await kit.stripe.subscriptionSchedules.cancel(schedule.id, {}, c.opts);
    expect(canceled.status).toBe('canceled');
    expect(await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).toMatchObject({ status: 'canceled' });
    await expect.poll(() => kit.receiver.ofType('subscription_schedule.canceled', (s) => s.id === schedule.id).length).toBe(1);
    await expect.poll(() => kit.receiver.ofType('customer.subscription.deleted', (s) => s.id === sub.id).length).toBe(1);
  });

  it('refuses a next phase in another currency and schedules made without from_subscription', async () => {
    const { c, sub } = await memberWithCheaperPrice();
    const eur = await kit.stripe.prices.create({ product: c.product.id, currency: 'eur', unit_amount: 1999, recurring: { interval: 'month' } }, c.opts);
    const schedule = await kit.stripe.subscriptionSchedules.create({ from_subscription: sub.id }, c.opts);
    await expect(
      kit.stripe.subscriptionSchedules.update(schedule.id, { phases: [{ items: [{ price: c.price.id }], start_date: itemOf(sub).current_period_start }, { items: [{ price: eur.id }], duration: { interval: 'month' } }] }, c.opts),
    ).rejects.toMatchObject({ statusCode: 400, param: 'phases[1][items][0][price]' });
    await expect(kit.stripe.subscriptionSchedules.create({ customer: sub.customer as string, phases: [{ items: [{ price: c.price.id }] }] }, c.opts)).rejects.toMatchObject({ statusCode: 400, param: 'from_subscription' });
    await expect(kit.stripe.subscriptionSchedules.retrieve('sub_sched_nope', {}, c.opts)).rejects.toMatchObject({ statusCode: 404, message: "No such subscription_schedule: 'sub_sched_nope'" });
  });
});
