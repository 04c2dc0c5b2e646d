import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';
import { count, date, dateTime } from '../format.js';
import { Card, Empty, ErrorMessage, Table } from '../ui/parts.js';
import type { MemberRecord } from '../api/types.js';

type Workout = Schemas['ExecutedWorkout'];
type Kind = MemberRecord['personal_records'][number]['kind'];
type ChallengeStatus = MemberRecord['challenges'][number]['status'];

/** The member's training in your communities: workouts, personal records and challenges. */
export function MemberActivity({ member }: { member: MemberRecord }) {
  return (
    <>
      <Workouts member={member} />
      <Records member={member} />
      <Challenges member={member} />
    </>
  );
}

/** The record's 20 latest workouts, and further pages from GET /members/{id}/workout-logs on demand. */
function Workouts({ member }: { member: MemberRecord }) {
  const [more, setMore] = useState<{ items: Workout[]; page: number; pages: number }>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const communities = new Map(member.subscription_history.map((s) => [s.community_id, s.community_name]));
  const items = [...member.workouts.data, ...(more?.items ?? [])];
  const hasMore = more ? more.page < more.pages : member.workouts.next !== null;

  async function loadMore() {
    setBusy(true);
    setError(undefined);
    try {
      const page = (more?.page ?? 1) + 1;
      const answer = ok(await api.GET('/api/v1/members/{id}/workout-logs', { params: { path: { id: member.id }, query: { page, limit: 20 } } }));
      setMore({ items: [...(more?.items ?? []), ...answer.data], page, pages: answer.pagination.pages });
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card title="Workouts">
      {items.length === 0 ? (
        <Empty>No workouts logged in your communities yet.</Empty>
      ) : (
        <>
          <p class="hint" data-testid="member-workouts-total">
            {count(items.length)} of {count(member.workouts.total)} workouts, newest first
          </p>
          <div class="num-cols-4">
            <Table caption="Workouts logged" head={['Performed', 'Workout', 'Community', 'Sets']}>
              {items.map((w) => (
                <tr data-testid="workout-row">
                  <th scope="row" class="nowrap">
                    {dateTime(w.performed_at)}
                  </th>
                  <td>{w.workout_name ?? 'Own workout'}</td>
                  <td>{(w.community_id && communities.get(w.community_id)) ?? '—'}</td>
                  <td class="num">{count(w.sets_count)}</td>
                </tr>
              ))}
            </Table>
          </div>
          {hasMore ? (
            <div class="actions pager">
              <button type="button" onClick={loadMore} disabled={busy} data-testid="more-workouts">
                {busy ? 'Loading…' : 'Show more workouts'}
              </button>
            </div>
          ) : null}
        </>
      )}
      {error ? <ErrorMessage message={error} /> : null}
    </Card>
  );
}

const KIND: Record<Kind, string> = { max_load: 'Heaviest load', est_1rm: 'Estimated 1-rep max', max_volume: 'Most volume in a set', max_reps: 'Most reps in a set' };
const kg = (n: number) => `${count(n)} kg`;
const UNIT: Record<Kind, (n: number) => string> = { max_load: kg, est_1rm: kg, max_volume: kg, max_reps: (n) => `${count(n)} reps` };

function Records({ member }: { member: MemberRecord }) {
  return (
    <Card title="Personal records">
      {member.personal_records.length === 0 ? (
        <Empty>No personal records yet: a record is a set that beats the member’s earlier best.</Empty>
      ) : (
        <div class="num-cols-3 num-cols-4">
          <Table caption="Personal records, newest first" head={['Exercise', 'Record', 'Best', 'Before', 'Set on']}>
            {member.personal_records.map((r) => (
              <tr data-testid="pr-row">
                <th scope="row">{r.exercise_name}</th>
                <td>{KIND[r.kind]}</td>
                <td class="num">{UNIT[r.kind](r.value)}</td>
                <td class="num">{UNIT[r.kind](r.previous_value)}</td>
                <td class="nowrap">{date(r.performed_at)}</td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </Card>
  );
}

const CHALLENGE: Record<ChallengeStatus, string> = { scheduled: 'Not started', running: 'Running', finished: 'Finished', canceled: 'Canceled' };

function Challenges({ member }: { member: MemberRecord }) {
  return (
    <Card title="Challenges">
      {member.challenges.length === 0 ? (
        <Empty>Not in any of your challenges.</Empty>
      ) : (
        <div class="num-cols-3 num-cols-4">
          <Table caption="Challenges taken part in" head={['Challenge', 'State', 'Score', 'Rank', 'Joined']}>
            {member.challenges.map((c) => (
              <tr data-testid="challenge-row">
                <th scope="row">{c.name}</th>
                <td>{CHALLENGE[c.status]}</td>
                <td class="num">{count(c.score)}</td>
                <td class="num">#{count(c.rank)}</td>
                <td class="nowrap">{date(c.joined_at)}</td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </Card>
  );
}
