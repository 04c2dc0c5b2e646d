import { api, ok } from '../api/client.js';
import { href, navigate, type Route } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, Empty, Pager, Table, When } from '../ui/parts.js';
import { DELIVERY_STATUS, DELIVERY_STATUSES, DeliveryBadge, isDeliveryStatus, refreshMsFor, type DeliveryStatus } from './webhooks-labels.js';

/**
 * An endpoint's delivery log, newest first as the API lists it (kept 30 days), filtered by
 * state from the hash (#/webhooks/ID?status=dead&page=2). `version` changes after an action
 * that queues a delivery, to list it. The log refreshes itself while the page is shown: every
 * 5 s while a delivery on it is pending (a retry is due within seconds), else every 30 s.
 */
export function Deliveries({ endpointId, route, version }: { endpointId: string; route: Route; version: number }) {
  const raw = route.query.get('status');
  const status = isDeliveryStatus(raw) ? raw : undefined;
  const page = Math.max(1, Number(route.query.get('page')) || 1);
  const list = useLoad(
    async (signal) => ok(await api.GET('/api/v1/webhook-endpoints/{id}/deliveries', { params: { path: { id: endpointId }, query: { page, limit: 20, status } }, signal })),
    [endpointId, page, status, version],
    { refreshMs: ({ data }) => refreshMsFor(data) },
  );
  const go = (query: { status?: DeliveryStatus; page?: number }) => navigate(`webhooks/${endpointId}`, query);

  return (
    <Card title="Delivery log">
      <fieldset class="chips">
        <legend class="sr-only">Show deliveries</legend>
        {[undefined, ...DELIVERY_STATUSES].map((s) => (
          <label class={s === status ? 'on' : ''}>
            <input type="radio" name="delivery-status" checked={s === status} onChange={() => go({ status: s })} data-testid={`delivery-chip-${s ?? 'all'}`} />
            {s ? DELIVERY_STATUS[s].label : 'All'}
          </label>
        ))}
      </fieldset>
      <Show result={list} label="deliveries">
        {({ data, pagination }) =>
          data.length === 0 ? (
            <Empty>
              {status ? `No ${DELIVERY_STATUS[status].label.toLowerCase()} deliveries. ` : 'No deliveries yet: send a test event to see one here. '}
              {status ? <a href={href(`webhooks/${endpointId}`)}>Show every delivery</a> : null}
            </Empty>
          ) : (
            <>
              <Table caption="Deliveries, newest first" head={['Event', 'State', 'Attempts', 'Last answer', 'Next attempt']}>
                {data.map((d) => (
                  <tr data-testid="delivery-row" data-delivery-id={d.id} data-status={d.status} key={d.id}>
                    <th scope="row">
                      <a href={href(`webhooks/${endpointId}/${d.id}`)}>{d.event_type}</a>
                      <span class="hint">
                        <When iso={d.created_at} />
                      </span>
                    </th>
                    <td>
                      <DeliveryBadge status={d.status} />
                    </td>
                    <td class="num">{d.attempts}</td>
                    <td>
                      {d.last_attempt_at ? (
                        <>
                          {d.last_status_code ?? 'No answer'} · <When iso={d.last_attempt_at} />
                        </>
                      ) : (
                        'Not tried yet'
                      )}
                    </td>
                    <td data-testid="delivery-next">{d.status === 'pending' && d.next_attempt_at ? <When iso={d.next_attempt_at} notBefore /> : '—'}</td>
                  </tr>
                ))}
              </Table>
              <Pager page={pagination.page} pages={pagination.pages} total={pagination.total} noun="deliveries" onPage={(n) => go({ status, page: n })} />
            </>
          )
        }
      </Show>
    </Card>
  );
}
