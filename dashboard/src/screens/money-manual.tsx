import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';
import { money } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { ErrorMessage, Field, valueOf } from '../ui/parts.js';
import { centsOf } from './money-amount.js';

type Balance = Schemas['Balance'];
type Payout = Schemas['Payout'];

/**
 * The manual payout (only shown while the schedule is manual): an amount in major units, read
 * exactly into cents, then a confirmation naming the amount and where it goes. The minimum,
 * the balance and whether payouts are enabled are the API's to judge (422 with its message,
 * shown in the confirmation), so this form checks only that the text is an amount.
 */
export function ManualPayout({ balance, onDone }: { balance: Balance; onDone: () => void }) {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string>();
  const [asked, setAsked] = useState<{ cents: number; key: string }>();
  const [made, setMade] = useState<Payout>();
  const currency = balance.currency;

  function review(event: Event) {
    event.preventDefault();
    setMade(undefined);
    const cents = centsOf(text);
    if (cents === null || cents <= 0) {
      setProblem(`Enter an amount in ${currency.toUpperCase()} with at most two decimals, like 125.50.`);
      return;
    }
    setProblem(undefined);
    // One key per confirmation: retrying in the same dialog (after a timeout) can never pay twice.
    setAsked({ cents, key: crypto.randomUUID() });
  }

  return (
    // The confirmation sits outside the form: its own form's submit event would bubble into this one.
    <div class="manual-payout">
      <form data-testid="manual-payout" onSubmit={review} noValidate>
      <h3>Pay out now</h3>
      <Field id="payout-amount" label={`Amount (${currency.toUpperCase()})`} hint={`Available now: ${money(balance.available_cents, currency)}.`}>
        <input
          id="payout-amount"
          name="amount"
          inputMode="decimal"
          autoComplete="off"
          value={text}
          aria-describedby="payout-amount-hint"
          aria-invalid={problem ? true : undefined}
          onInput={(e) => setText(valueOf(e))}
        />
      </Field>
      {problem ? <ErrorMessage message={problem} /> : null}
      <div class="actions">
        <button type="submit" class="primary" data-testid="manual-payout-submit">
          Pay out…
        </button>
      </div>
      {made ? (
        <p class="notice" role="status" data-testid="manual-payout-done">
          Payout of {money(made.amount_cents, made.currency)} requested: it is listed below with its state.
        </p>
      ) : null}
      </form>
      {asked ? (
        <Confirm
          title={`Pay out ${money(asked.cents, currency)}?`}
          confirmLabel={`Pay out ${money(asked.cents, currency)}`}
          onConfirm={async () => {
            const payout = ok(await api.POST('/api/v1/payouts/manual', { body: { amount_cents: asked.cents }, headers: { 'Idempotency-Key': asked.key } })).data;
            setMade(payout);
            setText('');
          }}
          onClose={() => setAsked(undefined)}
          onDone={onDone}
        >
          <p>
            {money(asked.cents, currency)} will leave your available balance and go to the bank account on file at the processor. It cannot be
            taken back from here once the processor sends it.
          </p>
        </Confirm>
      ) : null}
    </div>
  );
}
