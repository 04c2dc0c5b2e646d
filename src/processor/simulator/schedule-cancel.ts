import { getObject, type Ctx } from './store.js';
import { notModifiable } from './schedules.js';
import { endSubscription } from './subscriptions.js';

// Above both schedules.ts and subscriptions.ts (which imports schedules.ts for renewals), so
// neither imports the other back.

/** POST /v1/subscription_schedules/{id}/cancel: cancels the subscription now, as Stripe does. */
export async function cancelSchedule(ctx: Ctx, id: string): Promise<unknown> {
  const sched = await getObject(ctx, id, 'subscription_schedule', { param: 'id', noun: 'subscription_schedule' });
  if (sched.data.status !== 'active') throw notModifiable(sched.data.status, 'cancel');
  const sub = await getObject(ctx, sched.data.subscription, 'subscription', { param: 'subscription' });
  sub.data.canceled_at = ctx.now;
  sub.data.cancellation_details.reason = 'cancellation_requested';
  await endSubscription(ctx, sub, ctx.now);
  return (await getObject(ctx, id, 'subscription_schedule', { noun: 'subscription_schedule' })).data;
}

