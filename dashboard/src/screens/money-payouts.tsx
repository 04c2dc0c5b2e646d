import { api, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';
import { date, money } from '../format.js';
import { href, navigate, type Route } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Badge, Card, Empty, Pager, Table } from '../ui/parts.js';

type Payout = Schemas['Payout'];
type Status = Payout['status'];

/** The API's states in its own order (pending → in transit → paid; failed or canceled aside). */
const STATUS: Record<Status, { label: string; tone: 'neutral' | 'good' | 'warn' | 'bad' }> = {
  pending: { label: 'Pending', tone: 'neutral' },
  in_transit: { label: 'In transit', tone: 'warn' },
  paid: { label: 'Paid', tone: 'good' },
  failed: { label: 'Failed', tone: 'bad' },
  canceled: { label: 'Canceled', tone: 'neutral' },
};
const STATUSES = Object.keys(STATUS) as Status[];
const isStatus = (s: string | null): s is Status => s !== null && s in STATUS;

/**
 * The payouts, newest first as GET /payouts lists them, filtered by state from the hash
 * (#/money?status=failed&page=2) so a reload or a shared link shows the same page.
 * `version` changes after a manual payout, to list it.
 */
export function Payouts({ route, version }: { route: Route; version: number }) {
  const raw = route.query.get('status');
  const status = isStatus(raw) ? raw : undefined;
  const page = Math.max(1, Number(route.query.get('page')) || 1);
  const payouts = useLoad(async () => ok(await api.GET('/api/v1/payouts', { params: { query: { page, limit: 20, status } } })), [page, status, version]);
  const go = (query: { status?: Status; page?: number }) => navigate('money', query);

  return (
    <Card title="Payouts">
      <fieldset class="chips">
        <legend class="sr-only">Show payouts</legend>
        {[undefined, ...STATUSES].map((s) => (
          <label class={s === status ? 'on' : ''}>
            <input type="radio" name="payout-status" checked={s === status} onChange={() => go({ status: s })} />
            {s ? STATUS[s].label : 'All'}
          </label>
        ))}
      </fieldset>
      <Show result={payouts} label="payouts">
        {({ data, pagination }) =>
          data.length === 0 ? (
            <Empty>
              {status
                ? `No ${STATUS[status].label.toLowerCase()} payouts. `
                : 'No payouts yet: the processor pays your available balance out on your schedule, or when you ask while it is manual. '}
              {status ? <a href={href('money')}>Show all payouts</a> : null}
            </Empty>
          ) : (
            <>
              <Table caption="Payouts, newest first" head={['Created', 'Amount', 'State', 'Arrives', 'Type', 'Details']}>
                {data.map((p) => (
                  <PayoutRow payout={p} />
                ))}
              </Table>
              <Pager page={pagination.page} pages={pagination.pages} total={pagination.total} noun="payouts" onPage={(n) => go({ status, page: n })} />
            </>
          )
        }
      </Show>
    </Card>
  );
}

function PayoutRow({ payout: p }: { payout: Payout }) {
  const state = STATUS[p.status];
  return (
    <tr data-testid="payout-row" data-payout-id={p.id} data-status={p.status}>
      <th scope="row" class="nowrap">
        {date(p.created_at)}
      </th>
      <td class="amount">{money(p.amount_cents, p.currency)}</td>
      <td>
        <Badge tone={state.tone}>{state.label}</Badge>
      </td>
      <td class="nowrap">{p.status === 'failed' || p.status === 'canceled' ? '—' : date(p.arrival_date)}</td>
      <td class="nowrap">{p.method === 'manual' ? 'Manual' : 'Automatic'}</td>
      <td class="payout-detail">
        {p.failure_reason ? <span class="failure">{p.failure_reason} </span> : null}
        {p.status === 'failed' ? 'The amount returns to your available balance.' : null}
      </td>
    </tr>
  );
}
