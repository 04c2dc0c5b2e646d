import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { count, date } from '../format.js';
import { href, navigate } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Badge, Card, Empty, Pager, Table } from '../ui/parts.js';
import type { Community } from './communities-labels.js';
import { ChallengeForm } from './training-challenge-form.js';
import { METRIC, STATUS, type Challenge } from './training-labels.js';

type Status = Challenge['status'];
const FILTERS: Array<[Status | '', string]> = [['', 'All'], ...Object.entries(STATUS).map(([k, s]) => [k as Status, s.label] as [Status, string])];

/** The challenges (GET /challenges), latest start first, filtered by status, with a "New challenge" form. */
export function ChallengesCard({ communities, selected, reload }: { communities: Community[]; selected?: string; reload: number }) {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<Status | ''>('');
  const [creating, setCreating] = useState(false);
  const list = useLoad(async () => ok(await api.GET('/api/v1/challenges', { params: { query: { page, limit: 20, ...(status ? { status } : {}) } } })), [page, status, reload]);
  const name = (id: string) => communities.find((c) => c.id === id)?.name ?? '—';
  const canCreate = communities.some((c) => c.status === 'active');
  return (
    <Card
      title="Challenges"
      actions={
        creating ? null : (
          <button type="button" class="primary" data-testid="new-challenge" disabled={!canCreate} onClick={() => setCreating(true)}>
            New challenge
          </button>
        )
      }
    >
      {creating ? (
        <ChallengeForm
          communities={communities}
          onSaved={(c) => {
            setCreating(false);
            list.reload();
            navigate(`training/challenge/${c.id}`);
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <fieldset class="chips">
        <legend class="sr-only">Show challenges</legend>
        {FILTERS.map(([value, label]) => (
          <label class={value === status ? 'on' : ''}>
            <input type="radio" name="challenge-status" value={value} checked={value === status} onChange={() => (setStatus(value), setPage(1))} />
            {label}
          </label>
        ))}
      </fieldset>
      <Show result={list} label="the challenges">
        {({ data, pagination }) =>
          data.length === 0 ? (
            <Empty>
              {status
                ? `No ${STATUS[status].label.toLowerCase()} challenges.`
                : canCreate
                  ? 'No challenges yet. Start one with “New challenge”: members join from the app and compete on a leaderboard.'
                  : 'No challenges yet. Challenges belong to an active community: create one (or resume a paused one) first.'}
            </Empty>
          ) : (
            <>
              <Table caption="Challenges" head={['Challenge', 'Community', 'What scores', 'Status', 'Window', 'Taking part']}>
                {data.map((c) => (
                  <tr data-testid="challenge-row" data-challenge-id={c.id} class={c.id === selected ? 'selected' : ''}>
                    <th scope="row">
                      <a href={href(`training/challenge/${c.id}`)} aria-current={c.id === selected ? 'true' : undefined}>
                        {c.name}
                      </a>
                    </th>
                    <td>{name(c.community_id)}</td>
                    <td>{METRIC[c.metric].label}</td>
                    <td>
                      <Badge tone={STATUS[c.status].tone}>{STATUS[c.status].label}</Badge>
                    </td>
                    <td>
                      {date(c.starts_at)} – {date(c.ends_at)}
                    </td>
                    <td>{count(c.participants_count)}</td>
                  </tr>
                ))}
              </Table>
              <Pager page={pagination.page} pages={pagination.pages} total={pagination.total} noun="challenges" onPage={setPage} />
            </>
          )
        }
      </Show>
    </Card>
  );
}
