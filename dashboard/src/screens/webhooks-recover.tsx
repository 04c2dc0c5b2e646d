import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { count, dateTime } from '../format.js';
import { Card, ErrorMessage, Field, valueOf } from '../ui/parts.js';

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 10);

/**
 * After an outage of the receiver: every failed delivery created since a day (from the
 * start of that day, in this browser's time zone; the log keeps 30 days) is queued again.
 */
export function Recover({ endpointId, onDone }: { endpointId: string; onDone: (text: string) => void }) {
  const [day, setDay] = useState(() => isoDay(Date.now() - DAY_MS));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  async function submit(event: Event) {
    event.preventDefault();
    const start = new Date(`${day}T00:00:00`);
    if (!day || Number.isNaN(start.getTime())) {
      setError('Choose a day.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const answer = ok(await api.POST('/api/v1/webhook-endpoints/{id}/recover', { params: { path: { id: endpointId } }, body: { since: start.toISOString() } })).data;
      onDone(`${count(answer.queued)} failed ${answer.queued === 1 ? 'delivery' : 'deliveries'} since ${dateTime(answer.since)} queued again.`);
    } catch (err) {
      setError(messageOf(err));
    }
    setBusy(false);
  }

  return (
    <Card title="Recover failed deliveries">
      <form onSubmit={submit} class="recover-form" data-testid="recover-form" noValidate>
        <Field id="recover-since" label="Send again every failed delivery since" hint="From the start of that day, your time. The log keeps 30 days.">
          <input
            id="recover-since"
            type="date"
            value={day}
            min={isoDay(Date.now() - 30 * DAY_MS)}
            max={isoDay(Date.now())}
            aria-describedby="recover-since-hint"
            onInput={(e) => setDay(valueOf(e))}
          />
        </Field>
        {error ? <ErrorMessage message={error} /> : null}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Working…' : 'Recover failed deliveries'}
          </button>
        </div>
      </form>
    </Card>
  );
}
