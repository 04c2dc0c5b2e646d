import './members.css';
import { api, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';
import { count, date } from '../format.js';
import { href, type Route } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, Empty, Pager, Table } from '../ui/parts.js';
import { MembersExport } from './members-export.js';
import { MemberFilters } from './members-filters.js';
import { days, SubscriptionBadge } from './members-labels.js';
import { apiFilters, PAGE_SIZE, readFilters, rememberList, setFilters, STATUSES, type Filters } from './members-query.js';

type Community = Schemas['Community'];
type Item = Schemas['MemberListItem'];
type Tier = Schemas['Tier'];

/**
 * Everyone who ever subscribed to one of the creator's communities (GET /members): filters in
 * the hash, the API's order and total (said to be "about" when the API estimates it), a page
 * at a time, and the same filters exported as CSV by the server.
 */
export function Members({ route }: { route: Route }) {
  const filters = readFilters(route);
  rememberList(location.hash);
  const query = apiFilters(filters);
  const key = JSON.stringify(query);
  const communities = useLoad(async () => ok(await api.GET('/api/v1/communities', { params: { query: { page: 1, limit: 100 } } })).data, []);
  const tiers = useLoad(async () => {
    const query = { page: 1, limit: 100, ...(filters.community_id ? { community_id: filters.community_id } : {}) };
    return ok(await api.GET('/api/v1/tiers', { params: { query } })).data;
  }, [filters.community_id]);
  // The answer keeps the filters it answers: while the next one loads, the sentence above the
  // table still describes the rows shown.
  const list = useLoad(
    async () => ({ ...ok(await api.GET('/api/v1/members', { params: { query: { ...query, page: filters.page, limit: PAGE_SIZE } } })), filters }),
    [key, filters.page],
  );
  const total = list.data?.pagination;
  const names = { communities: communities.data ?? [], tiers: tiers.data ?? [] };

  return (
    <>
      <div class="page-head">
        <h1>Members</h1>
        {total ? <MembersExport query={query} total={total.total} estimate={total.total_is_estimate} /> : null}
      </div>
      <Card>
        <MemberFilters filters={filters} communities={names.communities} tiers={tiers} />
      </Card>
      <Show result={list} label="members" saysUpdating>
        {({ data, pagination, filters: shown }) => (
          <Card class={list.state === 'loading' ? 'members-list stale' : 'members-list'}>
            <p class="members-total" data-testid="members-total" data-total={pagination.total} data-estimate={String(pagination.total_is_estimate)}>
              {pagination.total_is_estimate ? 'About ' : ''}
              {count(pagination.total)} {pagination.total === 1 ? 'member' : 'members'}
              {describe(shown, names)}
            </p>
            {list.state === 'loading' ? (
              <p class="loading" role="status">
                Updating…
              </p>
            ) : null}
            {data.length === 0 && pagination.total > 0 ? (
              <Empty>
                This page is past the last one. <a href={href('members', { ...shown, page: '' })}>Go to the first page</a>.
              </Empty>
            ) : data.length === 0 ? (
              <NoMembers filters={shown} />
            ) : (
              <div class="num-cols-5 num-cols-6 num-cols-7">
                <MemberTable items={data} communities={names.communities} />
              </div>
            )}
            {pagination.pages > 1 ? (
              <Pager
                page={pagination.page}
                pages={pagination.pages}
                total={pagination.total}
                estimate={pagination.total_is_estimate}
                noun="members"
                onPage={(page) => setFilters({ page })}
              />
            ) : null}
          </Card>
        )}
      </Show>
    </>
  );
}

/** What the total counts, in words: "at risk, in Força Total, matching "ana"". */
function describe(f: Filters, { communities, tiers }: { communities: Community[]; tiers: Tier[] }): string {
  const parts = [
    f.status ? STATUSES.find((s) => s.value === f.status)!.label.toLowerCase() : '',
    f.community_id ? `in ${communities.find((c) => c.id === f.community_id)?.name ?? 'the chosen community'}` : '',
    f.tier_id ? `in the ${tiers.find((t) => t.id === f.tier_id)?.name ?? 'chosen'} tier` : '',
    f.joined_after ? `who joined after ${date(`${f.joined_after}T00:00:00Z`)}` : '',
    f.q ? `matching “${f.q}”` : '',
  ].filter(Boolean);
  return parts.length ? `: ${parts.join(', ')}` : '';
}

function NoMembers({ filters }: { filters: Filters }) {
  const filtered = filters.status || filters.community_id || filters.tier_id || filters.joined_after || filters.q;
  return filtered ? (
    <Empty>
      No member matches these filters. <a href={href('members')}>Clear the filters</a> to see everyone.
    </Empty>
  ) : (
    <Empty>No members yet. Members appear here when someone subscribes to one of your communities: share a community’s page to get the first ones.</Empty>
  );
}

function MemberTable({ items, communities }: { items: Item[]; communities: Community[] }) {
  const communityName = (id: string) => communities.find((c) => c.id === id)?.name;
  return (
    <Table caption="Members" head={['Member', 'Joined', 'Memberships', 'Last active', 'Workouts, 30 days', 'Comments, 30 days', 'Streak']}>
      {items.map((m) => (
        <tr data-testid="member-row" data-member-id={m.id} key={m.id}>
          <th scope="row" class="member-cell">
            <a href={href(`member/${m.id}`)}>{m.name}</a>
            <span class="member-email">{m.email}</span>
          </th>
          {/* Oldest first, as the API lists them: the first is when they first joined you. */}
          <td class="nowrap">{date(m.subscriptions[0]?.joined_at)}</td>
          <td>
            <ul class="memberships">
              {m.subscriptions.map((s) => (
                <li>
                  {communities.length > 1 ? `${communityName(s.community_id) ?? 'Community'} · ` : ''}
                  {s.tier_name} <SubscriptionBadge status={s.status} />
                </li>
              ))}
            </ul>
          </td>
          <td class="nowrap">{m.engagement.last_active_at ? date(m.engagement.last_active_at) : 'Never'}</td>
          <td class="num">{count(m.engagement.workouts_completed_30d)}</td>
          <td class="num">{count(m.engagement.posts_count_30d)}</td>
          <td class="num">{m.engagement.streak_days ? days(m.engagement.streak_days) : '—'}</td>
        </tr>
      ))}
    </Table>
  );
}
