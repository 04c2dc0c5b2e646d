import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { count, dateTime } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { Show, useLoad } from '../ui/load.js';
import { Badge, Card, Empty, Pager, Table } from '../ui/parts.js';
import type { Community } from './communities-labels.js';
import { ChallengeForm } from './training-challenge-form.js';
import { METRIC, STATUS, type Challenge, type Ranking } from './training-labels.js';

/** A score in the metric's unit: "12 workouts", "3,450.5 kg", "9 days". */
export const score = (value: number, metric: Challenge['metric']) => `${count(value)} ${METRIC[metric].unit[value === 1 ? 0 : 1]}`;

/**
 * The rank change as GET /leaderboard gives it ("+2", "-1", "+0"): an arrow for the eye and
 * words for screen readers ("up 2"), since an arrow or a colour alone says nothing to them.
 */
export function Delta({ delta }: { delta: Ranking['delta'] }) {
  const n = Number(delta.slice(1));
  if (n === 0)
    return (
      <span class="delta same">
        <span aria-hidden="true">–</span>
        <span class="sr-only">no change</span>
      </span>
    );
  const up = delta.startsWith('+');
  return (
    <span class={`delta ${up ? 'up' : 'down'}`} data-delta={delta}>
      <span aria-hidden="true">
        {up ? '▲' : '▼'} {count(n)}
      </span>
      <span class="sr-only">
        {up ? 'up' : 'down'} {count(n)}
      </span>
    </span>
  );
}

/**
 * One challenge (GET /challenges/{id}) with its window, what scores, an edit form, a
 * cancellation behind a confirmation, and its leaderboard page by page.
 */
export function ChallengeDetail({ id, communities, onChanged }: { id: string; communities: Community[]; onChanged: () => void }) {
  const challenge = useLoad(async () => {
    const c = ok(await api.GET('/api/v1/challenges/{id}', { params: { path: { id } } })).data;
    // The exercise and tier names, for the facts: the challenge carries only their ids.
    const [exercise, tier] = await Promise.all([
      c.exercise_id ? api.GET('/api/v1/exercises/{id}', { params: { path: { id: c.exercise_id } } }).then((r) => ok(r).data.name) : undefined,
      c.tier_min_id ? api.GET('/api/v1/tiers/{id}', { params: { path: { id: c.tier_min_id } } }).then((r) => ok(r).data.name) : undefined,
    ]);
    return { c, exercise, tier };
  }, [id]);
  const [page, setPage] = useState(1);
  const board = useLoad(async () => ok(await api.GET('/api/v1/challenges/{id}/leaderboard', { params: { path: { id }, query: { page, limit: 25 } } })), [id, page]);
  const [editing, setEditing] = useState(false);
  const [canceling, setCanceling] = useState(false);
  const changed = () => (setEditing(false), challenge.reload(), board.reload(), onChanged());

  return (
    <Show result={challenge} label="the challenge">
      {({ c, exercise, tier }) => (
        <>
          <Card
            title={c.name}
            class="challenge-detail"
            actions={
              editing ? null : (
                <>
                  <button type="button" data-testid="edit-challenge" onClick={() => setEditing(true)}>
                    Edit
                  </button>
                  {c.status === 'scheduled' || c.status === 'running' ? (
                    <button type="button" data-testid="cancel-challenge" onClick={() => setCanceling(true)}>
                      Cancel challenge
                    </button>
                  ) : null}
                </>
              )
            }
          >
            <p>
              <Badge tone={STATUS[c.status].tone}>{STATUS[c.status].label}</Badge> {count(c.participants_count)} taking part
              {c.canceled_at ? `; canceled ${dateTime(c.canceled_at)}` : ''}
            </p>
            {c.warnings.map((w) => (
              <p class="notice">{w.message}</p>
            ))}
            {editing ? (
              <ChallengeForm communities={communities} challenge={c} exerciseName={exercise} onSaved={changed} onCancel={() => setEditing(false)} />
            ) : (
              <dl class="facts">
                <dt>Community</dt>
                <dd>{communities.find((x) => x.id === c.community_id)?.name ?? '—'}</dd>
                <dt>What scores</dt>
                <dd>
                  {METRIC[c.metric].label}
                  {exercise ? `: ${exercise}` : ''}. <span class="muted">{METRIC[c.metric].explain}</span>
                </dd>
                <dt>Window</dt>
                <dd>
                  {dateTime(c.starts_at)} to {dateTime(c.ends_at)} ({count(c.duration_days)} days)
                </dd>
                <dt>Who can join</dt>
                <dd>{tier ? `Members of ${tier} or a higher tier` : 'Members of every tier'}</dd>
                <dt>Rules</dt>
                <dd class="prewrap">{c.description || <span class="muted">None</span>}</dd>
              </dl>
            )}
          </Card>
          <Card title="Leaderboard">
            <Show result={board} label="the leaderboard">
              {({ data, pagination }) =>
                data.rankings.length === 0 ? (
                  <Empty>No one has joined yet: members join from the app, and every workout they log in the window scores.</Empty>
                ) : (
                  <>
                    <p class="muted">
                      Standings as of {dateTime(data.updated_at)}. Changes compare with the end of the last day ranked (UTC).
                    </p>
                    <Table caption={`Leaderboard of ${c.name}`} head={['Rank', 'Member', 'Score', 'Change']}>
                      {data.rankings.map((r) => (
                        <tr data-testid="leaderboard-row" data-member-id={r.member_id}>
                          <td>{count(r.rank)}</td>
                          <th scope="row">{r.name}</th>
                          <td>{score(r.score, c.metric)}</td>
                          <td>
                            <Delta delta={r.delta} />
                          </td>
                        </tr>
                      ))}
                    </Table>
                    <Pager page={pagination.page} pages={pagination.pages} total={pagination.total} noun="participants" onPage={setPage} />
                  </>
                )
              }
            </Show>
          </Card>
          {canceling ? (
            <Confirm
              title={`Cancel ${c.name}?`}
              confirmLabel="Cancel challenge"
              danger
              onConfirm={async () => ok(await api.POST('/api/v1/challenges/{id}/cancel', { params: { path: { id: c.id } } }))}
              onClose={() => setCanceling(false)}
              onDone={changed}
            >
              <p>
                No one can join or leave any more, and the {count(c.participants_count)} participants' scores freeze as they are now. The leaderboard stays readable. This cannot
                be undone.
              </p>
            </Confirm>
          ) : null}
        </>
      )}
    </Show>
  );
}
