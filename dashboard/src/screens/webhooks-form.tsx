import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import type { paths } from '../api/openapi.js';
import type { DataOf } from '../api/types.js';
import { Show, useLoad } from '../ui/load.js';
import { Field, FormActions, valueOf } from '../ui/parts.js';
import { useIdempotencyKey } from './member-idempotency.js';

type Created = DataOf<'/api/v1/webhook-endpoints', 'post'>;
type Events = NonNullable<paths['/api/v1/webhook-endpoints']['post']['requestBody']>['content']['application/json']['events'];

/**
 * A new endpoint: its URL, every event type (including types added later) or the ones ticked
 * from GET /webhook-event-types, and a description. The API judges the URL (422 with its
 * message); one Idempotency-Key per form and body, so a submit retried after a lost answer never adds two.
 */
export function EndpointForm({ onDone, onCancel }: { onDone: (endpoint: Created) => void; onCancel: () => void }) {
  const types = useLoad(async () => ok(await api.GET('/api/v1/webhook-event-types')).data, []);
  const [url, setUrl] = useState('');
  const [every, setEvery] = useState(true);
  const [picked, setPicked] = useState<string[]>([]);
  const [description, setDescription] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const keyFor = useIdempotencyKey();

  async function submit(event: Event) {
    event.preventDefault();
    if (!every && picked.length === 0) {
      setError('Tick at least one event type, or choose every type.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const body = { url: url.trim(), events: (every ? ['*'] : picked) as NonNullable<Events>, ...(description.trim() ? { description: description.trim() } : {}) };
      onDone(ok(await api.POST('/api/v1/webhook-endpoints', { body, headers: { 'Idempotency-Key': keyFor(body) } })).data);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }
  const toggle = (type: string, on: boolean) => setPicked((p) => (on ? [...p, type] : p.filter((t) => t !== type)));

  return (
    <form onSubmit={submit} class="endpoint-form" data-testid="endpoint-form" noValidate>
      <Field id="endpoint-url" label="URL" hint="A public https address of yours that accepts POST requests.">
        <input id="endpoint-url" type="url" required value={url} autoComplete="off" aria-describedby="endpoint-url-hint" onInput={(e) => setUrl(valueOf(e))} />
      </Field>
      <fieldset class="plain">
        <legend>Events to send</legend>
        <label class="choice">
          <input type="radio" name="endpoint-events" checked={every} onChange={() => setEvery(true)} data-testid="events-every" />
          <span>
            Every type
            <small>Including types Tribes adds later.</small>
          </span>
        </label>
        <label class="choice">
          <input type="radio" name="endpoint-events" checked={!every} onChange={() => setEvery(false)} data-testid="events-some" />
          <span>Only the types ticked below</span>
        </label>
        <Show result={types} label="event types">
          {(list) => (
            <ul class="event-types">
              {list.map((t) => (
                <li>
                  <label class="choice">
                    <input type="checkbox" disabled={every} checked={every || picked.includes(t.type)} onChange={(e) => toggle(t.type, e.currentTarget.checked)} />
                    <span>
                      <code>{t.type}</code>
                      <small>{t.description}</small>
                    </span>
                  </label>
                </li>
              ))}
            </ul>
          )}
        </Show>
      </fieldset>
      <Field id="endpoint-description" label="Description (optional)" hint="What it is for, for you.">
        <input id="endpoint-description" maxLength={500} value={description} aria-describedby="endpoint-description-hint" onInput={(e) => setDescription(valueOf(e))} />
      </Field>
      <FormActions error={error} busy={busy} label="Add endpoint" onCancel={onCancel} />
    </form>
  );
}
