import Stripe from 'stripe';
import { STORY_DAYS, TIERS, type Cast, type Rng, type TierKey } from './cast.js';
import { client, eventually, HttpError, type Client } from './http.js';

export const DAY = 86_400;

/** Everything the demo's steps share. */
export interface World {
  creator: Client;
  admin: Client;
  /** The simulator's test helpers (no key). */
  sim: Client;
  /** The platform's `stripe` SDK pointed at the simulator: what the processor dashboard would change. */
  stripe: Stripe;
  apiBase: string;
  account: string;
  /** Processor time (account clock) of day 0 of the story; the story ends at `start + STORY_DAYS` days = now. */
  start: number;
  rng: Rng;
  communities: { main: string; run: string };
  tiers: Record<TierKey, string>;
  log(line: string): void;
}

export interface Member {
  cast: Cast;
  id: string;
  token: string;
  password: string;
  customer?: string;
  subscriptionId?: string;
  /** Processor time the member subscribed at (the story's clock). */
  joinedAt?: number;
}

const isoDay = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

/** `t` moved by `months` calendar months (as the processor bills), in seconds. */
export function addMonths(t: number, months: number): number {
  const d = new Date(t * 1000);
  d.setUTCMonth(d.getUTCMonth() + months);
  return Math.floor(d.getTime() / 1000);
}

/** Moves the creator's processor clock to `t` (never back), running what falls due on the way. */
async function clockTo(w: World, t: number): Promise<void> {
  const { now } = await w.sim.get<{ now: number }>(`/v1/test_helpers/accounts/${w.account}/clock`);
  if (t > now) await w.sim.post(`/v1/test_helpers/accounts/${w.account}/clock/advance`, { seconds: t - now });
}

/** The service's copy of the member's subscription, once the processor's events have reached it. */
async function subscriptionOf(w: World, m: Member): Promise<string> {
  m.subscriptionId ??= await eventually(`${m.cast.name}'s subscription in Tribes`, async () => {
    const page = await w.creator.get<Array<{ id: string }>>(`/api/v1/subscriptions?member_id=${m.id}&limit=1`);
    return page[0]?.id;
  });
  return m.subscriptionId;
}

type Step = { at: number; what: string; run: () => Promise<void> };

/** The processor side of the story: six months of joins, renewals, failed cards, cancellations and a refund. */
export async function runHistory(w: World, members: Member[]): Promise<void> {
  const end = w.start + STORY_DAYS * DAY;
  // A time of day members act at: 08:00 to 20:00 in Brazil (UTC−3), on story day `day`.
  const hour = () => (Math.floor(w.rng() * 12 + 8) + 3) * 3600 + Math.floor(w.rng() * 3600);
  const dayAt = (day: number) => Math.floor((w.start + day * DAY) / DAY) * DAY + hour();
  const steps: Step[] = [];
  for (const m of members) {
    const { fate } = m.cast;
    let joinAt = dayAt(m.cast.joinDay);
    if (fate.kind === 'past_due') {
      // Two months (and the trial) before a renewal that fell 2 to 5 days ago; the card fails the day before it.
      const renewal = end - (2 + Math.floor(w.rng() * 4)) * DAY;
      joinAt = addMonths(renewal, -2) - (TIERS[m.cast.tier].trial_days ?? 0) * DAY;
      steps.push({ at: renewal - DAY, what: 'card fails', run: () => failCard(w, m) });
    }
    if (fate.kind === 'cancels_at_period_end') {
      // Their period must still be running today: joined 1 to 4 months (and the trial) before a day 10 days from now.
      joinAt = addMonths(end + 10 * DAY, -(1 + Math.floor(w.rng() * 4))) - (TIERS[m.cast.tier].trial_days ?? 0) * DAY;
    }
    m.joinedAt = Math.min(joinAt, end - 3600);
    steps.push({ at: joinAt, what: 'joins', run: () => subscribe(w, m) });
    if (fate.kind === 'churns_on_failed_payments') steps.push({ at: dayAt(fate.failDay), what: 'card fails', run: () => failCard(w, m) });
    if (fate.kind === 'cancels_at_period_end' || fate.kind === 'canceled_at_period_end_long_ago') {
      steps.push({ at: dayAt(fate.atDay), what: 'cancels', run: () => cancel(w, m, false) });
    }
    if (fate.kind === 'canceled_now') {
      steps.push({
        at: dayAt(fate.atDay),
        what: 'leaves',
        run: async () => {
          if (fate.refund) await w.creator.post(`/api/v1/subscriptions/${await subscriptionOf(w, m)}/refund`, {});
          await cancel(w, m, true);
        },
      });
    }
  }
  // Nothing in the story happens later than an hour ago: the account clock must not pass today.
  for (const step of steps) step.at = Math.min(step.at, end - 3600);
  steps.sort((a, b) => a.at - b.at);
  let joined = 0;
  for (const step of steps) {
    await clockTo(w, step.at);
    await step.run();
    if (step.what === 'joins' && ++joined % 10 === 0) w.log(`${joined} of ${members.length} members have joined (processor clock at ${isoDay(step.at)})`);
  }
  // Caught up with the shared clock (which went on ticking while the story ran): from now on the
  // creator's processor time is everyone's.
  await clockTo(w, (await w.sim.get<{ now: number }>('/v1/test_helpers/clock')).now);
  await inboxDrained(w);
  w.log(`processor history made up to today (${isoDay(end)}), and mirrored by Tribes`);
}

async function subscribe(w: World, m: Member): Promise<void> {
  const member = memberClient(w, m);
  const session = await member.post<{ processor_session_id: string }>('/api/v1/member/checkout-sessions', { tier_id: w.tiers[m.cast.tier] });
  const complete = (payment_method: string) =>
    w.sim.post<{ customer: string; subscription: string }>(`/v1/test_helpers/checkout_sessions/${session.processor_session_id}/complete`, {
      payment_method,
      name: m.cast.name,
      email: m.cast.email,
    });
  if (m.cast.declinedFirst) {
    const declined = await complete('pm_card_chargeDeclined').then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!(declined instanceof HttpError)) throw new Error('a declined card was accepted at checkout');
  }
  const done = await complete('pm_card_visa');
  m.customer = done.customer;
}

async function failCard(w: World, m: Member): Promise<void> {
  if (!m.customer) throw new Error(`${m.cast.name} has no processor customer yet`);
  await w.sim.post(`/v1/test_helpers/customers/${m.customer}/payment_behavior`, { fail: true });
}

async function cancel(w: World, m: Member, immediate: boolean): Promise<void> {
  const reason = immediate ? 'Pediu para sair: mudou de cidade' : 'Vai pausar os treinos por uns meses';
  await w.creator.post(`/api/v1/subscriptions/${await subscriptionOf(w, m)}/cancel`, { immediate, reason });
}

export const memberClient = (w: World, m: Member): Client => client(w.apiBase, m.token);

/** Waits until Tribes has processed every processor event it has received (its webhook inbox). */
export async function inboxDrained(w: Pick<World, 'admin'>): Promise<void> {
  await eventually(
    'the webhook inbox to drain',
    async () => ((await w.admin.raw('GET', '/api/v1/admin/webhook-events?status=pending&limit=1')).pagination.total === 0 ? true : undefined),
    60_000,
  );
}
