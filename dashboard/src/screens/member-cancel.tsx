import { useRef, useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';
import { dateTime } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { Field, valueOf } from '../ui/parts.js';
import { useIdempotencyKey } from './member-idempotency.js';
import type { HistoryItem, MemberRecord } from '../api/types.js';

/**
 * Cancel (POST /subscriptions/{id}/cancel): at the end of the period, or now without a refund,
 * with an optional internal reason. The dialog says which and when before anything happens;
 * the notice afterwards says what the API answered.
 */
export function CancelDialog(props: { member: MemberRecord; subscription: HistoryItem; onClose: () => void; onDone: (message: string) => void }) {
  const { member, subscription: s } = props;
  // Already ending at the period's end: the one change left is ending it now.
  const [immediate, setImmediate] = useState(s.cancel_at_period_end);
  const [reason, setReason] = useState('');
  const answer = useRef<Schemas['Subscription']>(undefined);
  const keyFor = useIdempotencyKey();
  const trial = s.status === 'trialing';
  const periodEnd = s.current_period_end ? dateTime(s.current_period_end) : undefined;

  async function cancel() {
    const body = { immediate, ...(reason.trim() ? { reason: reason.trim() } : {}) };
    answer.current = ok(
      await api.POST('/api/v1/subscriptions/{id}/cancel', { params: { path: { id: s.id } }, body, headers: { 'Idempotency-Key': keyFor(body) } }),
    ).data;
  }
  function done() {
    const after = answer.current;
    const ends = after?.current_period_end ? dateTime(after.current_period_end) : 'the end of the period';
    props.onDone(
      after?.status === 'canceled'
        ? `${member.name}’s ${s.tier_name} subscription is canceled: access has ended and nothing was refunded.`
        : `${member.name}’s ${s.tier_name} subscription will end on ${ends}; they keep access until then and will not be charged again.`,
    );
  }

  return (
    <Confirm title={`Cancel ${member.name}’s ${s.tier_name} subscription?`} confirmLabel="Confirm cancellation" danger onConfirm={cancel} onClose={props.onClose} onDone={done}>
      <div data-testid="confirm-cancel">
        <fieldset class="plain">
          <legend>When should it end?</legend>
          <label class="choice">
            <input type="radio" name="cancel-when" checked={!immediate} disabled={s.cancel_at_period_end} onChange={() => setImmediate(false)} data-testid="cancel-at-period-end" />
            <span>
              At the end of the {trial ? 'trial' : 'period'}
              {periodEnd ? ` (${periodEnd})` : ''}
              <small>
                {s.cancel_at_period_end
                  ? 'Already set: it ends then unless you end it now.'
                  : `They keep access until then and are not charged again.${trial ? '' : ' Nothing is refunded.'}`}
              </small>
            </span>
          </label>
          <label class="choice">
            <input type="radio" name="cancel-when" checked={immediate} onChange={() => setImmediate(true)} data-testid="cancel-now" />
            <span>
              Now, without a refund
              <small>Access ends at once. {trial ? 'The trial ends unpaid.' : 'The rest of the period is not refunded; you can refund the last payment separately.'}</small>
            </span>
          </label>
        </fieldset>
        <Field id={`cancel-reason-${s.id}`} label="Internal reason (optional)" hint="For you and your team only: it is kept with the subscription and never shown to the member.">
          <textarea
            id={`cancel-reason-${s.id}`}
            maxLength={500}
            rows={3}
            value={reason}
            aria-describedby={`cancel-reason-${s.id}-hint`}
            onInput={(e) => setReason(valueOf(e))}
            data-testid="cancel-reason"
          />
        </Field>
      </div>
    </Confirm>
  );
}
