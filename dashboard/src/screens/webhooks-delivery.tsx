import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import type { DataOf } from '../api/types.js';
import { count } from '../format.js';
import { href } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, Empty, ErrorMessage, When } from '../ui/parts.js';
import { DeliveryBadge, refreshMsFor } from './webhooks-labels.js';

type Detail = DataOf<'/api/v1/webhook-endpoints/{id}/deliveries/{delivery_id}', 'get'>;

/**
 * One delivery: the body every attempt sends, and each attempt (when, the HTTP status or why
 * none came, how long it took, the answer's first KB). "Send again" queues it now, whatever
 * its state; it keeps its webhook-id, so a receiver that dedupes sees a replay. It refreshes
 * itself as the delivery log does (every 5 s while pending), so a retry shows as it happens.
 */
export function WebhookDelivery({ endpointId, deliveryId }: { endpointId: string; deliveryId: string }) {
  const path = { params: { path: { id: endpointId, delivery_id: deliveryId } } };
  const delivery = useLoad(async (signal) => ok(await api.GET('/api/v1/webhook-endpoints/{id}/deliveries/{delivery_id}', { ...path, signal })).data, [endpointId, deliveryId], {
    refreshMs: (d) => refreshMsFor([d]),
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();

  async function again() {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      ok(await api.POST('/api/v1/webhook-endpoints/{id}/deliveries/{delivery_id}/retry', path));
      setNotice('Queued: it is sent again within about a second, with the same webhook-id.');
      delivery.reload();
    } catch (err) {
      setError(messageOf(err));
    }
    setBusy(false);
  }

  return (
    <>
      <p>
        <a href={href(`webhooks/${endpointId}`)}>Back to the endpoint</a>
      </p>
      <Show result={delivery} label="the delivery">
        {(d) => (
          <>
            <div class="page-head">
              <h1>Delivery of {d.event_type}</h1>
              <button type="button" class="primary" disabled={busy} onClick={again} data-testid="send-again">
                {busy ? 'Working…' : 'Send again'}
              </button>
            </div>
            {error ? <ErrorMessage message={error} /> : null}
            <p class="notice-slot" role="status">
              {notice ? <span class="notice">{notice}</span> : null}
            </p>
            <Card title="Delivery">
              <dl class="facts">
                <dt>State</dt>
                <dd data-testid="delivery-state" data-status={d.status}>
                  <DeliveryBadge status={d.status} />
                </dd>
                <dt>Event id</dt>
                <dd>
                  <code>{d.event_id}</code>
                </dd>
                <dt>Created</dt>
                <dd>
                  <When iso={d.created_at} />
                </dd>
                <dt>Attempts</dt>
                <dd>{count(d.attempts)}</dd>
                {d.status === 'pending' && d.next_attempt_at ? (
                  <>
                    <dt>Next attempt</dt>
                    <dd data-testid="delivery-next">
                      <When iso={d.next_attempt_at} notBefore />
                    </dd>
                  </>
                ) : null}
              </dl>
            </Card>
            <Card title="Attempts">
              <Attempts attempts={d.attempts_log} />
            </Card>
            <Card title="Payload">
              <pre class="payload" data-testid="delivery-payload">
                {JSON.stringify(d.payload, null, 2)}
              </pre>
            </Card>
          </>
        )}
      </Show>
    </>
  );
}

/**
 * A table on a wide screen; below 480 px (webhooks.css) each attempt stacks into a block of
 * labelled fields, so a phone shows every field without scrolling sideways.
 */
function Attempts({ attempts }: { attempts: Detail['attempts_log'] }) {
  if (attempts.length === 0) return <Empty>Not tried yet.</Empty>;
  return (
    <div class="table-wrap" role="region" aria-label="Attempts, oldest first" tabIndex={0}>
      <table class="attempts">
        <caption class="sr-only">Attempts, oldest first</caption>
        <thead>
          <tr>
            {HEAD.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {attempts.map((a) => (
            <tr data-testid="attempt-row" data-status-code={a.status_code ?? ''}>
              <th scope="row" data-label={HEAD[0]}>
                <When iso={a.attempted_at} />
              </th>
              <td data-label={HEAD[1]}>{a.status_code ?? 'No answer'}</td>
              <td data-label={HEAD[2]} class="num">
                {count(a.latency_ms)} ms
              </td>
              <td data-label={HEAD[3]} class="answer">
                {a.response_body ? <code>{a.response_body}</code> : '—'}
              </td>
              <td data-label={HEAD[4]}>{a.error ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const HEAD = ['When', 'Status', 'Time taken', 'Answer (first KB)', 'Error'];
