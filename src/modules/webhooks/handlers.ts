import type { Processor } from '../../processor/processor.js';
import type { CheckoutRepo } from '../checkout/checkout.repo.js';
import type { AccountSync } from '../account/account-sync.js';
import type { PayoutSync } from '../payouts/payout-sync.js';
import type { PaymentsSync } from '../subscriptions/payments-sync.js';
import type { SubscriptionSync } from '../subscriptions/sync.js';
import type { Executor } from '../../db/tx.js';
import type { EventHandler, ProcessorEvent } from './inbox.js';

/**
 * What the service does with each processor event. Every handler re-reads the object from
 * the processor: a payload may be old (redelivered, reordered), the processor's answer now
 * is not. Event types without a handler are acknowledged and ignored.
 */
export function createEventHandlers(deps: {
  processor: Processor;
  sync: SubscriptionSync;
  payoutSync: PayoutSync;
  payments: PaymentsSync;
  checkout: Pick<CheckoutRepo, 'setSessionStatus'>;
  accounts: Pick<AccountSync, 'read'>;
}): Record<string, EventHandler> {
  const { processor, sync, payoutSync, payments, checkout, accounts } = deps;
  const accountOf = (event: ProcessorEvent): string | undefined => event.account ?? undefined;

  const syncSubscription = async (account: string | undefined, subscriptionId: unknown) => {
    if (!account || typeof subscriptionId !== 'string') return undefined;
    const fresh = await sync.read(account, subscriptionId);
    return async (trx: Parameters<SubscriptionSync['apply']>[0]) => {
      await sync.apply(trx, account, fresh);
    };
  };

  const fromSubscriptionEvent: EventHandler = (event) => syncSubscription(accountOf(event), event.data.object.id);

  // A schedule's next phase is the subscription's scheduled tier change (migrations/0024): read with it.
  const fromScheduleEvent: EventHandler = (event) => syncSubscription(accountOf(event), (event.data.object as { subscription?: unknown }).subscription);

  const fromInvoiceEvent: EventHandler = (event) => {
    const invoice = event.data.object as { subscription?: unknown; parent?: { subscription_details?: { subscription?: unknown } } };
    return syncSubscription(accountOf(event), invoice.parent?.subscription_details?.subscription ?? invoice.subscription);
  };

  /** The invoice's subscription as it is now, then `apply` with the invoice read back from the processor, in one transaction. */
  const withInvoice =
    (apply: (trx: Executor, invoice: Awaited<ReturnType<Processor['retrieveInvoice']>>) => Promise<unknown>): EventHandler =>
    async (event) => {
      const account = accountOf(event);
      const writeSubscription = await fromInvoiceEvent(event);
      if (!account || typeof event.data.object.id !== 'string') return writeSubscription;
      const invoice = await processor.retrieveInvoice(account, event.data.object.id);
      return async (trx) => {
        await writeSubscription?.(trx);
        await apply(trx, invoice);
      };
    };

  return {
    'checkout.session.completed': async (event) => {
      const account = accountOf(event);
      if (!account || typeof event.data.object.id !== 'string') return undefined;
      const session = await processor.retrieveCheckoutSession(account, event.data.object.id);
      const subscriptionId = typeof session.subscription === 'string' ? session.subscription : session.subscription?.id;
      const writeSubscription = await syncSubscription(account, subscriptionId);
      return async (trx) => {
        await writeSubscription?.(trx);
        await checkout.setSessionStatus(session.id, session.status === 'complete' ? 'complete' : session.status === 'expired' ? 'expired' : 'open', trx);
      };
    },
    'customer.subscription.created': fromSubscriptionEvent,
    'customer.subscription.updated': fromSubscriptionEvent,
    'customer.subscription.deleted': fromSubscriptionEvent,
    'customer.subscription.trial_will_end': fromSubscriptionEvent,
    // A declined upgrade's pending update (payment_behavior pending_if_incomplete) applied or lapsed.
    'customer.subscription.pending_update_applied': fromSubscriptionEvent,
    'customer.subscription.pending_update_expired': fromSubscriptionEvent,
    'subscription_schedule.updated': fromScheduleEvent,
    // A paid invoice also becomes a payment row, the link a later refund is traced through.
    'invoice.paid': withInvoice((trx, invoice) => payments.applyInvoice(trx, invoice)),
    'charge.refunded': async (event) => {
      const account = accountOf(event);
      const paymentIntent = event.data.object.payment_intent;
      if (!account || typeof paymentIntent !== 'string') return undefined;
      const write = await payments.readRefunds(account, paymentIntent);
      return async (trx) => {
        await write(trx);
      };
    },
    // The subscription as it is now (past_due, say), and the failed attempt as payment.failed.
    'invoice.payment_failed': withInvoice((trx, invoice) => payments.applyFailure(trx, invoice)),
    'account.updated': async (event) => {
      const account = accountOf(event) ?? (typeof event.data.object.id === 'string' ? event.data.object.id : undefined);
      if (!account) return undefined;
      // Charges, payouts, requirements and the payout schedule, as the processor says now.
      const write = await accounts.read(account);
      return async (trx) => {
        await write(trx);
      };
    },
    ...Object.fromEntries(
      ['payout.created', 'payout.updated', 'payout.paid', 'payout.failed', 'payout.canceled'].map((type): [string, EventHandler] => [
        type,
        async (event) => {
          const account = accountOf(event);
          if (!account || typeof event.data.object.id !== 'string') return undefined;
          const write = await payoutSync.read(account, event.data.object.id);
          return async (trx) => {
            await write(trx);
          };
        },
      ]),
    ),
  };
}
