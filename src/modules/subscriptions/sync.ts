import { sql } from 'kysely';
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { lockProcessorObject } from '../../db/locks.js';
import type { Executor } from '../../db/tx.js';
import type { BillingPeriod, SubscriptionStatus } from '../../db/types.js';
import type { Processor } from '../../processor/processor.js';
import { scheduleIdOf } from '../../processor/schedules.js';
import { requalifyParticipations } from '../challenges/qualification.js';
import { createMetricsAggregates } from '../metrics/aggregates.js';
import { createMembershipRepo } from './membership.repo.js';
import { isLive, SUBSCRIPTION_STATUSES } from './status.js';
import { recordSubscriptionEvents } from './subscription-events.js';

/**
 * The subscription mirror. The service never trusts an event's payload for state it keeps:
 * it re-reads the subscription from the processor and writes what it read. Reads are
 * numbered from a database sequence taken *before* each read, and a row only accepts a
 * read numbered after the one it holds — so a slow, older read (a reordered or duplicated
 * delivery, a concurrent worker) can never move a subscription backwards.
 */
export interface ProcessorRead {
  seq: number;
  subscription: Stripe.Subscription;
  /**
   * The schedule attached to it, read with it (null: none). Undefined when it was not read
   * (reconciliation's list, an API answer): the stored scheduled change is then kept unless the
   * subscription has no schedule any more or already moved to the scheduled tier.
   */
  schedule?: Stripe.SubscriptionSchedule | null;
}

/**
 * The processor's statuses are kept as they are (status.ts says which are live). One this
 * mirror does not know gives no access: it is kept as `unpaid` (and logged) until a read says
 * otherwise, rather than left open.
 */
const statusOf = (status: string): SubscriptionStatus | undefined =>
  (SUBSCRIPTION_STATUSES as readonly string[]).includes(status) ? (status as SubscriptionStatus) : undefined;

function billingPeriodOf(price: Stripe.Price): BillingPeriod | undefined {
  const r = price.recurring;
  if (r?.interval === 'year' && r.interval_count === 1) return 'yearly';
  if (r?.interval === 'month' && r.interval_count === 3) return 'quarterly';
  if (r?.interval === 'month' && r.interval_count === 1) return 'monthly';
  return undefined;
}

const toDate = (unix: number | null | undefined) => (unix ? new Date(unix * 1000) : null);

const priceIdOf = (price: string | Stripe.Price | Stripe.DeletedPrice | undefined) => (typeof price === 'string' ? price : price?.id);

/**
 * What a schedule will change next: the first phase after the current one whose price is not
 * the subscription's price now, and when it starts. None once the schedule is done or released.
 */
function nextPhaseChange(schedule: Stripe.SubscriptionSchedule, currentPriceId: string): { priceId: string; at: number } | undefined {
  if (schedule.status !== 'active' && schedule.status !== 'not_started') return undefined;
  const after = schedule.current_phase?.start_date ?? -Infinity;
  const next = [...schedule.phases]
    .sort((a, b) => a.start_date - b.start_date)
    .find((phase) => phase.start_date > after && priceIdOf(phase.items[0]?.price) !== currentPriceId);
  const priceId = priceIdOf(next?.items[0]?.price);
  return next && priceId ? { priceId, at: next.start_date } : undefined;
}

interface ScheduledColumns {
  processor_schedule_id: string | null;
  scheduled_tier_id: string | null;
  scheduled_change_at: Date | null;
}
const NOTHING_SCHEDULED: ScheduledColumns = { processor_schedule_id: null, scheduled_tier_id: null, scheduled_change_at: null };

export function createSubscriptionSync({ db, processor, logger, now }: { db: Db; processor: Processor; logger: Logger; now?: () => Date }) {
  const membership = createMembershipRepo();
  const aggregates = createMetricsAggregates({ now });
  const clock = now ?? (() => new Date());
  async function nextSeq(): Promise<number> {
    const { rows } = await sql<{ seq: number }>`select nextval('processor_sync_seq')::bigint as seq`.execute(db);
    return Number(rows[0]!.seq);
  }

  /** Reads the subscription now; the sequence number is taken before the read on purpose. */
  async function read(account: string, processorSubscriptionId: string): Promise<ProcessorRead> {
    const seq = await nextSeq();
    const subscription = await processor.retrieveSubscription(account, processorSubscriptionId);
    const scheduleId = scheduleIdOf(subscription);
    return { seq, subscription, schedule: scheduleId ? await processor.retrieveSchedule(account, scheduleId) : null };
  }

  /**
   * The scheduled-change columns a read says (migrations/0024); undefined: keep the stored ones
   * (the schedule was not read and may still hold what they say).
   */
  async function scheduledColumns(
    trx: Executor,
    creatorId: string,
    { subscription: sub, schedule }: ProcessorRead,
    priceId: string,
    tierId: string,
    stored: { processor_schedule_id: string | null; scheduled_tier_id: string | null } | undefined,
  ): Promise<ScheduledColumns | undefined> {
    const scheduleId = scheduleIdOf(sub);
    if (!scheduleId) return NOTHING_SCHEDULED;
    if (schedule === undefined) {
      // Not read: a stored change to the tier it now holds has happened; anything else may still be ahead.
      return stored?.scheduled_tier_id === tierId ? { ...NOTHING_SCHEDULED, processor_schedule_id: scheduleId } : undefined;
    }
    const change = schedule ? nextPhaseChange(schedule, priceId) : undefined;
    const target = change
      ? await trx.selectFrom('tier_prices').select('tier_id').where('creator_id', '=', creatorId).where('processor_price_id', '=', change.priceId).executeTakeFirst()
      : undefined;
    if (change && !target) logger.warn({ subscription: sub.id, price: change.priceId }, 'scheduled price maps to no tier of ours; no scheduled change shown');
    if (!change || !target || target.tier_id === tierId) return { ...NOTHING_SCHEDULED, processor_schedule_id: scheduleId };
    return { processor_schedule_id: scheduleId, scheduled_tier_id: target.tier_id, scheduled_change_at: toDate(change.at) };
  }

  /**
   * Writes a read into the mirror (inside the caller's transaction). Returns the row id and
   * whether anything a client can see changed; undefined when the subscription is not one of
   * ours (unknown account, price or member) — it is logged and left alone.
   */
  async function apply(trx: Executor, account: string, fresh: ProcessorRead) {
    const { seq, subscription: sub } = fresh;
    const creator = await trx.selectFrom('creators').select('id').where('processor_account_id', '=', account).executeTakeFirst();
    const item = sub.items.data[0];
    const price = item?.price;
    if (!creator || !price) return undefined;
    const tierPrice = await trx
      .selectFrom('tier_prices as p')
      .innerJoin('tiers as t', 't.id', 'p.tier_id')
      .select(['p.tier_id', 't.community_id'])
      .where('p.creator_id', '=', creator.id)
      .where('p.processor_price_id', '=', price.id)
      .executeTakeFirst();
    const customerId = typeof sub.customer === 'string' ? sub.customer : sub.customer.id;
    const member = await trx
      .selectFrom('processor_customers')
      .select('member_id')
      .where('creator_id', '=', creator.id)
      .where('processor_customer_id', '=', customerId)
      .executeTakeFirst();
    const period = billingPeriodOf(price);
    if (!tierPrice || !member || !period || price.unit_amount == null) {
      logger.warn({ subscription: sub.id, account }, 'processor subscription does not map to a tier and member of ours; left alone');
      return undefined;
    }
    const known = statusOf(sub.status);
    const status = known ?? 'unpaid';
    if (!known) logger.warn({ subscription: sub.id, status: sub.status }, 'unknown processor subscription status; mirrored as unpaid (no access)');
    const raw = sub as unknown as { current_period_start?: number; current_period_end?: number };
    const values = {
      status,
      price_cents: price.unit_amount,
      billing_period: period,
      tier_id: tierPrice.tier_id,
      community_id: tierPrice.community_id,
      current_period_start: toDate(item.current_period_start ?? raw.current_period_start),
      current_period_end: toDate(item.current_period_end ?? raw.current_period_end),
      cancel_at_period_end: sub.cancel_at_period_end,
      canceled_at: toDate(sub.canceled_at),
      ended_at: toDate(sub.ended_at),
      trial_end: toDate(sub.trial_end),
    };
    const lapses = !isLive(status) && status !== 'canceled';
    // The mirror's writes of one processor subscription queue here until the writer commits:
    // two first reads of a new subscription would otherwise both record its state as a change
    // (a duplicate in the member's history). Existing rows are also locked below.
    await lockProcessorObject(trx, sub.id);
    const before = await trx
      .selectFrom('subscriptions')
      .selectAll()
      .where('processor_subscription_id', '=', sub.id)
      .forUpdate()
      .executeTakeFirst();
    if (before && Number(before.synced_seq) >= seq) return { id: before.id, changed: false };
    const scheduled = await scheduledColumns(trx, creator.id, fresh, price.id, tierPrice.tier_id, before);
    const written = await trx
      .insertInto('subscriptions')
      .values({
        id: newId(),
        creator_id: creator.id,
        member_id: member.member_id,
        processor_subscription_id: sub.id,
        processor_customer_id: customerId,
        created_at: new Date(sub.created * 1000),
        synced_seq: seq,
        ...values,
        ...(scheduled ?? NOTHING_SCHEDULED),
        // First seen not live (and not canceled): it never was.
        lapsed_at: lapses ? new Date(sub.created * 1000) : null,
      })
      .onConflict((oc) =>
        oc
          .column('processor_subscription_id')
          .doUpdateSet({
            ...values,
            ...scheduled,
            // When it stopped being live, as first seen (migrations/0020); kept through a later cancellation.
            lapsed_at: isLive(status) ? null : lapses ? sql<Date>`coalesce(subscriptions.lapsed_at, ${clock()})` : sql<Date | null>`subscriptions.lapsed_at`,
            synced_seq: seq,
            updated_at: new Date(),
          })
          .where('subscriptions.synced_seq', '<', seq),
      )
      .returning('id')
      .executeTakeFirst();
    const id = written?.id ?? before?.id;
    if (!id) return undefined;
    const changed =
      !before ||
      before.status !== values.status ||
      before.cancel_at_period_end !== values.cancel_at_period_end ||
      Number(before.price_cents) !== values.price_cents ||
      before.billing_period !== values.billing_period ||
      before.tier_id !== values.tier_id ||
      before.current_period_end?.getTime() !== values.current_period_end?.getTime() ||
      before.canceled_at?.getTime() !== values.canceled_at?.getTime() ||
      before.ended_at?.getTime() !== values.ended_at?.getTime();
    // What follows from the mirror, in its transaction: the subscription's history, the member
    // directory and the creator metrics' counters.
    if (written && changed) {
      await membership.recordChange(creator.id, id, trx);
      // Before the directory and counters locks: it may take the member's history lock, and
      // logging takes that lock before the directory row (workout-logs.service), so the two
      // queue rather than deadlock.
      await requalifyParticipations(creator.id, member.member_id, clock(), trx);
      await membership.refresh(creator.id, member.member_id, tierPrice.community_id, trx);
      await aggregates.refresh(creator.id, member.member_id, trx);
      // Outgoing events, decided here so that every path into the mirror sends them once per change.
      await recordSubscriptionEvents(trx, creator.id, before, id);
    }
    return { id, changed };
  }

  return {
    nextSeq,
    read,
    apply,
    /** Read and write in one go (API actions, reconciliation). */
    async sync(account: string, processorSubscriptionId: string) {
      const fresh = await read(account, processorSubscriptionId);
      return db.transaction().execute((trx) => apply(trx, account, fresh));
    },
  };
}

export type SubscriptionSync = ReturnType<typeof createSubscriptionSync>;
