import { useState } from 'preact/hooks';
import { date, dateTime, money } from '../format.js';
import { Table } from '../ui/parts.js';
import { CancelDialog } from './member-cancel.js';
import { RefundDialog } from './member-refund.js';
import type { HistoryItem, MemberRecord } from '../api/types.js';
import { PERIOD, SubscriptionBadge, subscriptionLabel } from './members-labels.js';

/** The API refuses to cancel these again (409 subscription_canceled); every other one can be. */
const ENDED = new Set<HistoryItem['status']>(['canceled', 'incomplete_expired']);

/**
 * One subscription: what it costs, where its period stands, how it ended (with the creator's
 * internal reason), its payments, refunds and recorded changes, and the two money actions.
 */
export function SubscriptionBlock(props: { member: MemberRecord; subscription: HistoryItem; currency: string | undefined; onDone: (message: string) => void }) {
  const { subscription: s, currency } = props;
  const [dialog, setDialog] = useState<'cancel' | 'refund'>();
  const price = (cents: number) => (currency ? money(cents, currency) : '—');
  const lastPayment = s.payments[s.payments.length - 1];
  const done = (message: string) => {
    setDialog(undefined);
    props.onDone(message);
  };

  return (
    <section class="subscription" aria-labelledby={`sub-${s.id}`} data-testid="subscription" data-subscription-id={s.id}>
      <header class="subscription-head">
        <h3 id={`sub-${s.id}`}>
          {s.community_name} · {s.tier_name} <SubscriptionBadge status={s.status} />
        </h3>
        <div class="actions">
          {!ENDED.has(s.status) ? (
            <button type="button" onClick={() => setDialog('cancel')} data-testid="cancel-subscription">
              Cancel subscription
            </button>
          ) : null}
          {lastPayment ? (
            <button type="button" onClick={() => setDialog('refund')} data-testid="refund-subscription">
              Refund last payment
            </button>
          ) : null}
        </div>
      </header>
      <dl class="facts">
        <dt>Price</dt>
        <dd>
          {price(s.price_cents)} per {PERIOD[s.billing_period]}
        </dd>
        <dt>Started</dt>
        <dd>{date(s.created_at)}</dd>
        {s.trial_end && s.status === 'trialing' ? (
          <>
            <dt>Trial ends</dt>
            <dd>{dateTime(s.trial_end)}</dd>
          </>
        ) : null}
        {!ENDED.has(s.status) && s.current_period_end && (s.status !== 'trialing' || s.cancel_at_period_end) ? (
          <>
            <dt>{s.cancel_at_period_end ? 'Ends' : s.status === 'active' ? 'Renews' : 'Current period ends'}</dt>
            <dd>
              {dateTime(s.current_period_end)}
              {s.cancel_at_period_end ? ' (canceled at the end of the period)' : ''}
            </dd>
          </>
        ) : null}
        {s.scheduled_change ? (
          <>
            <dt>Scheduled change</dt>
            <dd>
              To {s.scheduled_change.tier_name ?? 'another tier'} on {dateTime(s.scheduled_change.effective_at)}
            </dd>
          </>
        ) : null}
        {s.canceled_at ? (
          <>
            <dt>Canceled on</dt>
            <dd>{dateTime(s.canceled_at)}</dd>
          </>
        ) : null}
        {s.ended_at ? (
          <>
            <dt>Ended on</dt>
            <dd>{dateTime(s.ended_at)}</dd>
          </>
        ) : null}
        {s.cancellation_reason ? (
          <>
            <dt>Internal reason</dt>
            <dd data-testid="cancellation-reason">{s.cancellation_reason}</dd>
          </>
        ) : null}
      </dl>
      <Payments subscription={s} />
      {s.changes.length > 0 ? (
        <details>
          <summary>History of changes ({s.changes.length})</summary>
          <Table caption={`Changes to the ${s.tier_name} subscription`} head={['Recorded', 'Status', 'Tier', 'Price', 'Period ends']}>
            {s.changes.map((c) => (
              <tr>
                <th scope="row" class="nowrap">
                  {dateTime(c.recorded_at)}
                </th>
                <td>
                  {subscriptionLabel(c.status)}
                  {c.cancel_at_period_end ? ', set to cancel at the end of the period' : ''}
                </td>
                <td>{c.tier_id === s.tier_id ? s.tier_name : 'Another tier'}</td>
                <td class="num">{price(c.price_cents)}</td>
                <td class="nowrap">{dateTime(c.current_period_end)}</td>
              </tr>
            ))}
          </Table>
        </details>
      ) : null}
      {dialog === 'cancel' ? <CancelDialog member={props.member} subscription={s} onClose={() => setDialog(undefined)} onDone={done} /> : null}
      {dialog === 'refund' && lastPayment ? <RefundDialog member={props.member} subscription={s} onClose={() => setDialog(undefined)} onDone={done} /> : null}
    </section>
  );
}

function Payments({ subscription: s }: { subscription: HistoryItem }) {
  if (s.payments.length === 0 && s.refunds.length === 0) return <p class="hint">No payments yet{s.status === 'trialing' ? ': the trial is free' : ''}.</p>;
  // One table, newest first: payments and refunds as they happened.
  const rows = [
    ...s.payments.map((p) => ({ at: p.paid_at, what: 'Payment', amount: money(p.amount_cents, p.currency), state: 'Paid' })),
    ...s.refunds.map((r) => ({ at: r.created_at, what: 'Refund', amount: `−${money(r.amount_cents, r.currency)}`, state: refundState(r.status) })),
  ].sort((a, b) => b.at.localeCompare(a.at));
  return (
    <>
      <h4>Payments and refunds</h4>
      <div class="num-cols-3">
        <Table caption={`Payments and refunds of the ${s.tier_name} subscription`} head={['Date', 'Kind', 'Amount', 'State']}>
          {rows.map((r) => (
            <tr data-testid={r.what === 'Refund' ? 'refund-row' : 'payment-row'}>
              <th scope="row" class="nowrap">
                {dateTime(r.at)}
              </th>
              <td>{r.what}</td>
              <td class="num">{r.amount}</td>
              <td>{r.state}</td>
            </tr>
          ))}
        </Table>
      </div>
    </>
  );
}

const REFUND_STATES: Record<string, string> = { succeeded: 'Refunded', pending: 'Pending', requires_action: 'Needs action', failed: 'Failed', canceled: 'Canceled' };
const refundState = (status: string) => REFUND_STATES[status] ?? status;
