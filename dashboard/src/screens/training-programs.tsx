import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { count, date } from '../format.js';
import { href, navigate } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, Empty, Pager, Table } from '../ui/parts.js';
import type { Community } from './communities-labels.js';
import { ProgramForm } from './training-program-form.js';
import { GOAL, LEVEL } from './training-labels.js';

/** The programs (GET /workout-programs), newest first, with a "New program" form; `reload` changes when a detail changed one. */
export function ProgramsCard({ communities, selected, reload }: { communities: Community[]; selected?: string; reload: number }) {
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const list = useLoad(async () => ok(await api.GET('/api/v1/workout-programs', { params: { query: { page, limit: 20 } } })), [page, reload]);
  const name = (id: string) => communities.find((c) => c.id === id)?.name ?? '—';
  return (
    <Card
      title="Programs"
      actions={
        creating ? null : (
          <button type="button" class="primary" data-testid="new-program" disabled={communities.length === 0} onClick={() => setCreating(true)}>
            New program
          </button>
        )
      }
    >
      {creating ? (
        <ProgramForm
          communities={communities}
          onSaved={(p) => {
            setCreating(false);
            list.reload();
            navigate(`training/program/${p.id}`);
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <Show result={list} label="the programs">
        {({ data, pagination }) =>
          data.length === 0 ? (
            <Empty>{communities.length === 0 ? 'Create a community first: programs belong to one.' : 'No programs yet. Create one with “New program”, then add its workouts from the exercise catalog.'}</Empty>
          ) : (
            <>
              <Table caption="Programs" head={['Program', 'Community', 'For', 'Plan', 'Workouts', 'Created']}>
                {data.map((p) => (
                  <tr data-testid="program-row" data-program-id={p.id} class={p.id === selected ? 'selected' : ''}>
                    <th scope="row">
                      <a href={href(`training/program/${p.id}`)} aria-current={p.id === selected ? 'true' : undefined}>
                        {p.name}
                      </a>
                    </th>
                    <td>{name(p.community_id)}</td>
                    <td>
                      {LEVEL[p.level]} · {GOAL[p.goal]}
                    </td>
                    <td>
                      {count(p.duration_weeks)} weeks × {count(p.frequency_per_week)} a week
                    </td>
                    <td>{count(p.workouts_count)}</td>
                    <td>{date(p.created_at)}</td>
                  </tr>
                ))}
              </Table>
              <Pager page={pagination.page} pages={pagination.pages} total={pagination.total} noun="programs" onPage={setPage} />
            </>
          )
        }
      </Show>
    </Card>
  );
}
