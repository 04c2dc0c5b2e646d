import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import type { DataOf } from '../api/types.js';
import { dateTime } from '../format.js';
import { Show, useLoad } from '../ui/load.js';
import { Badge, Card, ErrorMessage } from '../ui/parts.js';

type Account = DataOf<'/api/v1/account', 'get'>;

const TONE: Record<Account['status'], 'good' | 'warn' | 'bad' | 'neutral'> = {
  active: 'good',
  pending_review: 'neutral',
  action_required: 'warn',
  onboarding_required: 'warn',
  restricted: 'bad',
};

const TITLE: Record<Account['status'], string> = {
  active: 'Payments active',
  pending_review: 'Under review',
  action_required: 'Action required',
  onboarding_required: 'Set up payments',
  restricted: 'Restricted',
};

/**
 * The account's state at the processor (GET /account) with the buttons the account API
 * offers: an onboarding link while something is due, the processor's own dashboard once
 * onboarding was submitted. Both links are single-use, so they are fetched on click.
 */
export function AccountCard() {
  const account = useLoad(async () => ok(await api.GET('/api/v1/account')).data, []);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  async function open(kind: 'onboarding' | 'dashboard') {
    setBusy(true);
    setError(undefined);
    try {
      const answer =
        kind === 'onboarding' ? ok(await api.POST('/api/v1/account/onboarding-link')).data : ok(await api.POST('/api/v1/account/dashboard-link')).data;
      if (answer.url) location.assign(answer.url);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <Show result={account} label="your account">
      {(a) => (
        <Card title="Payments account" class={`account ${TONE[a.status]}`}>
          <p>
            <Badge tone={TONE[a.status]}>{TITLE[a.status]}</Badge> {sentence(a)}
          </p>
          {a.requirements.current_deadline && a.status !== 'active' ? <p>Deadline: {dateTime(a.requirements.current_deadline)}</p> : null}
          {a.requirements.disabled_reason ? <p>Reason given by the processor: {a.requirements.disabled_reason}</p> : null}
          <div class="actions">
            {a.status !== 'active' && a.status !== 'pending_review' ? (
              <button type="button" class="primary" disabled={busy} onClick={() => open('onboarding')}>
                {a.details_submitted ? 'Provide what is due' : 'Set up payments'}
              </button>
            ) : null}
            {a.details_submitted ? (
              <button type="button" disabled={busy} onClick={() => open('dashboard')}>
                Open the processor dashboard
              </button>
            ) : null}
          </div>
          {error ? <ErrorMessage message={error} /> : null}
        </Card>
      )}
    </Show>
  );
}

/** The API's summary, without the route names meant for developers. */
const sentence = (a: Account) => a.summary.replace(/ \(POST [^)]*\)/g, '').replace(/`([^`]*)`/g, '$1');
