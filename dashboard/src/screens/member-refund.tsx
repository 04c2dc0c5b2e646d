import { useRef, useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';
import { dateTime, money } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { Field, valueOf } from '../ui/parts.js';
import { useIdempotencyKey } from './member-idempotency.js';
import type { HistoryItem, MemberRecord } from '../api/types.js';

/**
 * Refund the last payment (POST /subscriptions/{id}/refund): all that remains of it, or a part.
 * The API refunds the last paid invoice, so every refund recorded since that payment was taken
 * from it; the dialog shows the payment, those refunds and what remains before anything
 * happens. The API decides: 409 nothing_to_refund and 422 amount_exceeds_refundable come back
 * as its messages.
 */
export function RefundDialog(props: { member: MemberRecord; subscription: HistoryItem; onClose: () => void; onDone: (message: string) => void }) {
  const { member, subscription: s } = props;
  const payment = s.payments[s.payments.length - 1]!;
  const cash = (cents: number) => money(cents, payment.currency);
  const since = s.refunds.filter((r) => r.created_at >= payment.paid_at && r.status !== 'failed' && r.status !== 'canceled');
  const refunded = since.reduce((n, r) => n + r.amount_cents, 0);
  const remaining = Math.max(0, payment.amount_cents - refunded);
  const [part, setPart] = useState(false);
  const [amount, setAmount] = useState('');
  const answer = useRef<Schemas['Refund']>(undefined);
  const keyFor = useIdempotencyKey();
  const partCents = toCents(amount);
  const willRefund = part ? partCents : remaining;

  async function refund() {
    if (part && partCents === undefined) throw new Error(`Enter the amount to refund, like ${(remaining / 200).toFixed(2)}.`);
    const body = part ? { amount_cents: partCents } : {};
    answer.current = ok(
      await api.POST('/api/v1/subscriptions/{id}/refund', { params: { path: { id: s.id } }, body, headers: { 'Idempotency-Key': keyFor(body) } }),
    ).data;
  }
  function done() {
    const r = answer.current;
    if (!r) return;
    const pending = r.status === 'succeeded' ? '' : ` The processor reports it as ${r.status.replace(/_/g, ' ')}.`;
    props.onDone(`Refunded ${money(r.amount_cents, r.currency)} of ${member.name}’s last ${s.tier_name} payment. The subscription goes on.${pending}`);
  }

  return (
    <Confirm title={`Refund ${member.name}’s last payment?`} confirmLabel="Confirm refund" danger onConfirm={refund} onClose={props.onClose} onDone={done}>
      <div data-testid="confirm-refund">
        <p>
          Last payment for {s.community_name} · {s.tier_name}: <strong>{cash(payment.amount_cents)}</strong>, paid {dateTime(payment.paid_at)}.
          {since.length > 0 ? ` Already refunded from it: ${cash(refunded)} (${since.map((r) => dateTime(r.created_at)).join(', ')}).` : ''}
        </p>
        <fieldset class="plain">
          <legend>How much?</legend>
          <label class="choice">
            <input type="radio" name="refund-how-much" checked={!part} onChange={() => setPart(false)} data-testid="refund-full" />
            <span>
              {since.length > 0 ? 'All that remains' : 'The whole payment'}: <span class="amount">{cash(remaining)}</span>
            </span>
          </label>
          <label class="choice">
            <input type="radio" name="refund-how-much" checked={part} onChange={() => setPart(true)} data-testid="refund-partial" />
            <span>A part of it</span>
          </label>
        </fieldset>
        {part ? (
          <Field id={`refund-amount-${s.id}`} label={`Amount to refund (${payment.currency.toUpperCase()})`} hint={`Up to ${cash(remaining)}`}>
            <input
              id={`refund-amount-${s.id}`}
              inputMode="decimal"
              autocomplete="off"
              value={amount}
              aria-describedby={`refund-amount-${s.id}-hint`}
              onInput={(e) => setAmount(valueOf(e))}
              data-testid="refund-amount"
            />
          </Field>
        ) : null}
        <p data-testid="refund-summary">
          {willRefund === undefined ? (
            'Enter an amount to see what will be refunded.'
          ) : (
            <>
              <strong>{cash(willRefund)}</strong> goes back to the member’s payment method. The platform fee on it is reversed in proportion. The subscription is not canceled.
            </>
          )}
        </p>
      </div>
    </Confirm>
  );
}

/** "12,50" or "12.50" as 1250 cents; anything else (or zero) is no amount. */
function toCents(text: string): number | undefined {
  const match = /^\s*(\d{1,9})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!match) return undefined;
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return cents > 0 ? cents : undefined;
}
