import './webhooks.css';
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { DataOf } from '../api/types.js';
import { href, type Route } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, Empty, Table } from '../ui/parts.js';
import { WebhookDelivery } from './webhooks-delivery.js';
import { WebhookEndpoint } from './webhooks-endpoint.js';
import { EndpointForm } from './webhooks-form.js';
import { EndpointState, eventsText, failingText, type Endpoint } from './webhooks-labels.js';
import { SecretOnce } from './webhooks-secret.js';

type Created = DataOf<'/api/v1/webhook-endpoints', 'post'>;

/**
 * Outgoing webhooks (DESIGN §9): #/webhooks lists the endpoints and adds one,
 * #/webhooks/ID is an endpoint with its delivery log, #/webhooks/ID/DELIVERY one delivery.
 */
export function Webhooks({ route }: { route: Route }) {
  const [, id, deliveryId] = route.parts;
  if (id && deliveryId) return <WebhookDelivery endpointId={id} deliveryId={deliveryId} />;
  if (id) return <WebhookEndpoint id={id} route={route} />;
  return <EndpointList />;
}

function EndpointList() {
  const list = useLoad(async () => ok(await api.GET('/api/v1/webhook-endpoints', { params: { query: { page: 1, limit: 100 } } })).data, []);
  const [adding, setAdding] = useState(false);
  const [created, setCreated] = useState<Created>();

  return (
    <>
      <div class="page-head">
        <h1>Webhooks</h1>
        {adding ? null : (
          <button type="button" class="primary" onClick={() => (setAdding(true), setCreated(undefined))} data-testid="add-endpoint">
            Add an endpoint
          </button>
        )}
      </div>
      <p class="hint">
        Tribes sends events (a workout logged, a record beaten…) to your own URLs as they happen, signed with each endpoint’s secret, and retries for about 3 days
        when a delivery fails.
      </p>
      {created ? <SecretOnce title={`Endpoint added: ${created.url}`} secret={created.secret} onDismiss={() => setCreated(undefined)} /> : null}
      {adding ? (
        <Card title="Add an endpoint">
          <EndpointForm
            onCancel={() => setAdding(false)}
            onDone={(endpoint) => {
              setAdding(false);
              setCreated(endpoint);
              list.reload();
            }}
          />
        </Card>
      ) : null}
      <Card title="Endpoints">
        <Show result={list} label="your endpoints">
          {(endpoints) => (endpoints.length === 0 ? <Empty>No endpoints yet. Add one to receive events at your own URL.</Empty> : <EndpointTable endpoints={endpoints} />)}
        </Show>
      </Card>
    </>
  );
}

function EndpointTable({ endpoints }: { endpoints: Endpoint[] }) {
  return (
    <Table caption="Webhook endpoints" head={['Endpoint', 'Events', 'State', 'Failures']}>
      {endpoints.map((e) => (
        <tr data-testid="endpoint-row" data-endpoint-id={e.id} key={e.id}>
          <th scope="row" class="endpoint-url">
            <a href={href(`webhooks/${e.id}`)}>{e.url}</a>
            {e.description ? <span class="hint">{e.description}</span> : null}
          </th>
          <td>{eventsText(e.events)}</td>
          <td>
            <EndpointState endpoint={e} />
          </td>
          <td>{failingText(e)}</td>
        </tr>
      ))}
    </Table>
  );
}
