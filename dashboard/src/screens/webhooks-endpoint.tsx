import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import type { DataOf } from '../api/types.js';
import { dateTime } from '../format.js';
import { href, navigate, type Route } from '../router.js';
import { Confirm } from '../ui/confirm.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, ErrorMessage } from '../ui/parts.js';
import { Deliveries } from './webhooks-deliveries.js';
import { EndpointState, eventsText, failingText, type Endpoint } from './webhooks-labels.js';
import { Recover } from './webhooks-recover.js';
import { SecretOnce } from './webhooks-secret.js';

type Rotated = DataOf<'/api/v1/webhook-endpoints/{id}/rotate-secret', 'post'>;

/**
 * One endpoint: what it receives and its state, the actions on it (test event, turn off or
 * on, rotate the secret, delete), recovering failed deliveries, and its delivery log.
 */
export function WebhookEndpoint({ id, route }: { id: string; route: Route }) {
  const endpoint = useLoad(async () => ok(await api.GET('/api/v1/webhook-endpoints/{id}', { params: { path: { id } } })).data, [id]);
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState<{ text: string; link?: string }>();
  const [rotated, setRotated] = useState<Rotated>();

  return (
    <>
      <p>
        <a href={href('webhooks')}>All endpoints</a>
      </p>
      <Show result={endpoint} label="the endpoint">
        {(e) => (
          <>
            <h1 class="endpoint-title">{e.url}</h1>
            <p class="notice-slot" role="status">
              {notice ? (
                <span class="notice" data-testid="endpoint-notice">
                  {notice.text} {notice.link ? <a href={notice.link}>See the delivery</a> : null}
                </span>
              ) : null}
            </p>
            {rotated ? <SecretOnce title="New signing secret" secret={rotated.secret} onDismiss={() => setRotated(undefined)} /> : null}
            <Card title="Endpoint">
              <dl class="facts" data-testid="endpoint-facts">
                <dt>State</dt>
                <dd data-testid="endpoint-state">
                  <EndpointState endpoint={e} />
                </dd>
                <dt>Events</dt>
                <dd>{eventsText(e.events)}</dd>
                <dt>Description</dt>
                <dd>{e.description ?? '—'}</dd>
                <dt>Failures</dt>
                <dd>{failingText(e)}</dd>
                <dt>Secret rotated</dt>
                <dd>{e.secret_rotated_at ? dateTime(e.secret_rotated_at) : 'Never'}</dd>
                <dt>Added</dt>
                <dd>{dateTime(e.created_at)}</dd>
              </dl>
              <Actions
                endpoint={e}
                onChanged={(text, link) => {
                  setNotice({ text, link });
                  endpoint.reload();
                  setVersion((v) => v + 1);
                }}
                onRotated={(r) => {
                  setRotated(r);
                  setNotice(undefined);
                  endpoint.reload();
                }}
              />
            </Card>
            <Recover endpointId={e.id} onDone={(text) => (setNotice({ text }), setVersion((v) => v + 1))} />
            <Deliveries endpointId={e.id} route={route} version={version} />
          </>
        )}
      </Show>
    </>
  );
}

type Asking = 'delete' | 'rotate' | undefined;

function Actions({ endpoint: e, onChanged, onRotated }: { endpoint: Endpoint; onChanged: (text: string, link?: string) => void; onRotated: (r: Rotated) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [asking, setAsking] = useState<Asking>();
  const path = { params: { path: { id: e.id } } };

  async function run(action: () => Promise<void>) {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(messageOf(err));
    }
    setBusy(false);
  }
  const sendTest = () =>
    run(async () => {
      const delivery = ok(await api.POST('/api/v1/webhook-endpoints/{id}/test', path)).data;
      onChanged('Test event queued: it is sent within about a second.', href(`webhooks/${e.id}/${delivery.id}`));
    });
  const setEnabled = (enabled: boolean) =>
    run(async () => {
      ok(await api.PATCH('/api/v1/webhook-endpoints/{id}', { ...path, body: { enabled } }));
      onChanged(enabled ? 'Endpoint enabled: deliveries that waited are sent now.' : 'Endpoint disabled: nothing is sent to it until you enable it again.');
    });

  return (
    <>
      {error ? <ErrorMessage message={error} /> : null}
      <div class="actions endpoint-actions">
        <button type="button" class="primary" disabled={busy || !e.enabled} onClick={sendTest} data-testid="send-test">
          Send test event
        </button>
        {e.enabled ? (
          <button type="button" disabled={busy} onClick={() => setEnabled(false)} data-testid="disable-endpoint">
            Disable
          </button>
        ) : (
          <button type="button" disabled={busy} onClick={() => setEnabled(true)} data-testid="enable-endpoint">
            Enable
          </button>
        )}
        <button type="button" disabled={busy} onClick={() => setAsking('rotate')} data-testid="rotate-secret">
          Rotate secret…
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => setAsking('delete')} data-testid="delete-endpoint">
          Delete…
        </button>
      </div>
      {e.enabled ? null : <p class="hint">Enable the endpoint to send a test event.</p>}
      {asking === 'delete' ? (
        <Confirm
          title="Delete this endpoint?"
          confirmLabel="Delete endpoint"
          danger
          onConfirm={async () => ok(await api.DELETE('/api/v1/webhook-endpoints/{id}', path))}
          onClose={() => setAsking(undefined)}
          onDone={() => navigate('webhooks')}
        >
          <p>
            Nothing more is sent to <code>{e.url}</code>, and its delivery log is deleted with it. This cannot be undone.
          </p>
        </Confirm>
      ) : null}
      {asking === 'rotate' ? (
        <Confirm
          title="Rotate the signing secret?"
          confirmLabel="Rotate secret"
          onConfirm={async () => onRotated(ok(await api.POST('/api/v1/webhook-endpoints/{id}/rotate-secret', path)).data)}
          onClose={() => setAsking(undefined)}
        >
          <p>
            A new secret is made and shown once. The old secret keeps signing deliveries beside the new one for 24 hours, so you can switch your receiver over
            without missing any; after that only the new one signs.
          </p>
        </Confirm>
      ) : null}
    </>
  );
}
