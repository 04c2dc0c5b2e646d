import './communities.css';
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { count, date } from '../format.js';
import { href, navigate, type Route } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Badge, Card, Empty, Pager, Table } from '../ui/parts.js';
import { CommunityDetail } from './communities-detail.js';
import { CommunityForm } from './communities-form.js';
import { CATEGORY } from './communities-labels.js';

const STATUSES = [
  ['', 'All'],
  ['active', 'Active'],
  ['paused', 'Paused'],
] as const;
type Status = 'active' | 'paused';

/**
 * The currency of the creator's prices: every tier carries it (the server sets one for all),
 * and before the first tier the balance does. Undefined if neither answers: figures then
 * show a dash rather than a guessed currency.
 */
async function loadCurrency(): Promise<string | undefined> {
  const tiers = ok(await api.GET('/api/v1/tiers', { params: { query: { page: 1, limit: 1 } } })).data;
  if (tiers[0]) return tiers[0].currency;
  const balance = await api.GET('/api/v1/payouts/balance');
  return balance.data?.data.currency;
}

/**
 * Communities and tiers (#/communities, #/communities/ID): the list with a status filter,
 * a "New community" form, and the chosen community's detail with its tiers above the list.
 */
export function Communities({ route }: { route: Route }) {
  const id = route.parts[1];
  const status = (route.query.get('status') ?? '') as Status | '';
  const page = Number(route.query.get('page')) || 1;
  const [creating, setCreating] = useState(false);
  const list = useLoad(async () => ok(await api.GET('/api/v1/communities', { params: { query: { page, limit: 20, ...(status ? { status } : {}) } } })), [page, status]);
  const currency = useLoad(loadCurrency, []);
  const query = { status, page: page > 1 ? page : undefined };
  // The detail opens above the list: bring it into view when a row far down was chosen.
  useEffect(() => void (id && scrollTo({ top: 0 })), [id]);

  return (
    <>
      <div class="page-head">
        <h1>Communities</h1>
        {creating ? null : (
          <button type="button" class="primary" data-testid="new-community" onClick={() => setCreating(true)}>
            New community
          </button>
        )}
      </div>
      {creating ? (
        <Card title="New community" class="form-card">
          <CommunityForm
            onSaved={(c) => {
              setCreating(false);
              list.reload();
              navigate(`communities/${c.id}`);
            }}
            onCancel={() => setCreating(false)}
          />
        </Card>
      ) : null}
      {id ? <CommunityDetail key={id} id={id} currency={currency.data} onChanged={list.reload} /> : null}
      <Card title="Your communities">
        <fieldset class="chips">
          <legend class="sr-only">Show</legend>
          {STATUSES.map(([value, label]) => (
            <label class={value === status ? 'on' : ''}>
              <input type="radio" name="community-status" value={value} checked={value === status} onChange={() => navigate(id ? `communities/${id}` : 'communities', { status: value })} />
              {label}
            </label>
          ))}
        </fieldset>
        <Show result={list} label="your communities">
          {({ data, pagination }) =>
            data.length === 0 ? (
              <Empty>{status ? `No ${status} communities.` : 'No communities yet. Create your first with “New community”, then add a tier members can subscribe to.'}</Empty>
            ) : (
              <>
                {id ? null : <p class="muted">Choose a community to see its figures, settings and tiers.</p>}
                <Table caption="Your communities" head={['Community', 'Category', 'Status', 'Members with access', 'Paying members', 'Created']}>
                  {data.map((c) => (
                    <tr data-testid="community-row" data-community-id={c.id} class={c.id === id ? 'selected' : ''}>
                      <th scope="row">
                        <a href={href(`communities/${c.id}`, query)} aria-current={c.id === id ? 'true' : undefined}>
                          {c.name}
                        </a>
                        <div class="muted">{c.slug}</div>
                      </th>
                      <td>{CATEGORY[c.category]}</td>
                      <td>{c.status === 'active' ? <Badge tone="good">Active</Badge> : <Badge tone="warn">Paused</Badge>}</td>
                      <td>{count(c.members_count)}</td>
                      <td>{count(c.active_subscribers)}</td>
                      <td>{date(c.created_at)}</td>
                    </tr>
                  ))}
                </Table>
                <Pager page={pagination.page} pages={pagination.pages} total={pagination.total} noun="communities" onPage={(p) => navigate(id ? `communities/${id}` : 'communities', { ...query, page: p })} />
              </>
            )
          }
        </Show>
      </Card>
    </>
  );
}
