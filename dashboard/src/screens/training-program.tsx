import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { count, dateTime } from '../format.js';
import { navigate } from '../router.js';
import { Confirm } from '../ui/confirm.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, ErrorMessage } from '../ui/parts.js';
import type { Community } from './communities-labels.js';
import { ProgramForm } from './training-program-form.js';
import { GOAL, LEVEL, MUSCLE, type Workout } from './training-labels.js';
import { WorkoutForm } from './training-workout-form.js';

/**
 * One program (GET /workout-programs/{id}) with its workouts in order: edit, delete, add a
 * workout, edit or delete one, and move one up or down (PUT .../workout-order with the
 * whole new order, as the API asks).
 */
export function ProgramDetail({ id, communities, onChanged }: { id: string; communities: Community[]; onChanged: () => void }) {
  const program = useLoad(async () => ok(await api.GET('/api/v1/workout-programs/{id}', { params: { path: { id } } })).data, [id]);
  const [editing, setEditing] = useState<string>();
  const [deleting, setDeleting] = useState<'program' | Workout>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const changed = () => (setEditing(undefined), program.reload(), onChanged());

  async function move(workouts: Workout[], index: number, by: number) {
    const order = workouts.map((w) => w.id);
    const [item] = order.splice(index, 1);
    order.splice(index + by, 0, item!);
    setBusy(true);
    setError(undefined);
    try {
      ok(await api.PUT('/api/v1/workout-programs/{id}/workout-order', { params: { path: { id } }, body: { workout_ids: order } }));
      program.reload();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Show result={program} label="the program">
      {(p) => (
        <Card
          title={p.name}
          class="program-detail"
          actions={
            editing === 'program' ? null : (
              <>
                <button type="button" data-testid="edit-program" onClick={() => setEditing('program')}>
                  Edit
                </button>
                <button type="button" data-testid="delete-program" onClick={() => setDeleting('program')}>
                  Delete
                </button>
              </>
            )
          }
        >
          {editing === 'program' ? (
            <ProgramForm communities={communities} program={p} onSaved={changed} onCancel={() => setEditing(undefined)} />
          ) : (
            <dl class="facts">
              <dt>Community</dt>
              <dd>{communities.find((c) => c.id === p.community_id)?.name ?? '—'}</dd>
              <dt>Plan</dt>
              <dd>
                {count(p.duration_weeks)} weeks, {count(p.frequency_per_week)} workouts a week
              </dd>
              <dt>For</dt>
              <dd>
                {LEVEL[p.level]} · {GOAL[p.goal]}
              </dd>
              <dt>Description</dt>
              <dd class="prewrap">{p.description || <span class="muted">None</span>}</dd>
              <dt>Updated</dt>
              <dd>{dateTime(p.updated_at)}</dd>
            </dl>
          )}
          <div class="card-head section-head">
            <h3>Workouts ({count(p.workouts.length)})</h3>
            {editing === 'new' ? null : (
              <button type="button" class="primary" data-testid="new-workout" onClick={() => setEditing('new')}>
                New workout
              </button>
            )}
          </div>
          {error ? <ErrorMessage message={error} /> : null}
          {editing === 'new' ? <WorkoutForm programId={p.id} onSaved={changed} onCancel={() => setEditing(undefined)} /> : null}
          {p.workouts.length === 0 && editing !== 'new' ? <p class="empty">No workouts yet. Add the first with “New workout”: members follow them in this order.</p> : null}
          <ol class="workouts">
            {p.workouts.map((w, i) => (
              <li data-testid="workout-row" data-workout-id={w.id}>
                {editing === w.id ? (
                  <WorkoutForm programId={p.id} workout={w} onSaved={changed} onCancel={() => setEditing(undefined)} />
                ) : (
                  <>
                    <div class="card-head">
                      <h4>
                        {i + 1}. {w.name}
                      </h4>
                      <div class="row-actions">
                        <button type="button" disabled={busy || i === 0} onClick={() => move(p.workouts, i, -1)} aria-label={`Move ${w.name} up`}>
                          Up
                        </button>
                        <button type="button" disabled={busy || i === p.workouts.length - 1} onClick={() => move(p.workouts, i, 1)} aria-label={`Move ${w.name} down`}>
                          Down
                        </button>
                        <button type="button" onClick={() => setEditing(w.id)} aria-label={`Edit ${w.name}`}>
                          Edit
                        </button>
                        <button type="button" onClick={() => setDeleting(w)} aria-label={`Delete ${w.name}`}>
                          Delete
                        </button>
                      </div>
                    </div>
                    <ul class="plain">
                      {w.exercises.map((x) => (
                        <li>
                          {x.exercise_name} <span class="muted">({MUSCLE[x.muscle_group]})</span>: {x.sets} × {x.reps}
                          {x.load_kg != null ? ` at ${x.load_kg} kg` : ''}
                          {x.rest_sec != null ? `, rest ${x.rest_sec} s` : ''}
                        </li>
                      ))}
                    </ul>
                  </>
                )}
              </li>
            ))}
          </ol>
          {deleting === 'program' ? (
            <Confirm
              title={`Delete ${p.name}?`}
              confirmLabel="Delete program"
              danger
              onConfirm={async () => ok(await api.DELETE('/api/v1/workout-programs/{id}', { params: { path: { id: p.id } } }))}
              onClose={() => setDeleting(undefined)}
              onDone={() => (onChanged(), navigate('training'))}
            >
              <p>
                The program and its {count(p.workouts.length)} workouts disappear from your dashboard and from members' apps. This cannot be undone. Workouts members already logged
                keep their history.
              </p>
            </Confirm>
          ) : deleting ? (
            <Confirm
              title={`Delete ${deleting.name}?`}
              confirmLabel="Delete workout"
              danger
              onConfirm={async () => ok(await api.DELETE('/api/v1/workouts/{id}', { params: { path: { id: deleting.id } } }))}
              onClose={() => setDeleting(undefined)}
              onDone={changed}
            >
              <p>The workout leaves this program and the workouts after it move up one place. Logs members made of it keep their history.</p>
            </Confirm>
          ) : null}
        </Card>
      )}
    </Show>
  );
}
