import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { Field, FormActions, valueOf } from '../ui/parts.js';
import { ExercisePicker, VideoLink } from './training-exercise-picker.js';
import { MUSCLE, type Exercise, type Workout } from './training-labels.js';

/** One line of the workout being edited: numbers stay text until sent, as the person typed them. */
interface Entry {
  key: number;
  exercise_id: string;
  name: string;
  muscle: Exercise['muscle_group'];
  video_url: string | null;
  sets: string;
  reps: string;
  load: string;
  rest: string;
}

let nextKey = 0;
const fromWorkout = (w: Workout): Entry[] =>
  w.exercises.map((x) => ({
    key: nextKey++,
    exercise_id: x.exercise_id,
    name: x.exercise_name,
    muscle: x.muscle_group,
    video_url: null,
    sets: String(x.sets),
    reps: x.reps,
    load: x.load_kg == null ? '' : String(x.load_kg),
    rest: x.rest_sec == null ? '' : String(x.rest_sec),
  }));

/**
 * Adds a workout to a program (POST /workout-programs/{id}/workouts) or replaces one's name
 * and exercise list (PATCH /workouts/{id}): exercises picked from the catalog, each with
 * sets, reps as text ("8", "8-12", "AMRAP", "30s"), an optional load and rest.
 */
export function WorkoutForm({ programId, workout, onSaved, onCancel }: { programId: string; workout?: Workout; onSaved: () => void; onCancel: () => void }) {
  const [name, setName] = useState(workout?.name ?? '');
  const [entries, setEntries] = useState<Entry[]>(() => (workout ? fromWorkout(workout) : []));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const prefix = workout ? `workout-${workout.id}` : `new-workout-${programId}`;

  const update = (key: number, change: Partial<Entry>) => setEntries((list) => list.map((e) => (e.key === key ? { ...e, ...change } : e)));
  const move = (index: number, by: number) =>
    setEntries((list) => {
      const next = [...list];
      const [item] = next.splice(index, 1);
      next.splice(index + by, 0, item!);
      return next;
    });
  const add = (x: Exercise) =>
    setEntries((list) => [
      ...list,
      { key: nextKey++, exercise_id: x.id, name: x.name, muscle: x.muscle_group, video_url: x.video_url, sets: '3', reps: x.kind === 'timed' ? '30s' : '10', load: '', rest: '60' },
    ]);

  async function submit(event: Event) {
    event.preventDefault();
    if (entries.length === 0) return setError('Add at least one exercise from the catalog below.');
    setBusy(true);
    setError(undefined);
    const exercises = entries.map((e) => ({
      exercise_id: e.exercise_id,
      sets: Number(e.sets),
      reps: e.reps.trim(),
      load_kg: e.load.trim() === '' ? null : Number(e.load.replace(',', '.')),
      rest_sec: e.rest.trim() === '' ? null : Number(e.rest),
    }));
    try {
      if (workout) ok(await api.PATCH('/api/v1/workouts/{id}', { params: { path: { id: workout.id } }, body: { name, exercises } }));
      else ok(await api.POST('/api/v1/workout-programs/{id}/workouts', { params: { path: { id: programId } }, body: { name, exercises } }));
      onSaved();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} class="inline-form" data-testid="workout-form">
      <Field id={`${prefix}-name`} label="Workout name">
        <input id={`${prefix}-name`} required maxLength={200} value={name} onInput={(e) => setName(valueOf(e))} placeholder="e.g. Day A: legs" />
      </Field>
      <h4 class="form-subhead">Exercises, in the order they are done</h4>
      {entries.length === 0 ? <p class="muted">None yet: search the catalog below and add them.</p> : null}
      <ol class="entries">
        {entries.map((e, i) => (
          <li data-testid="workout-entry">
            <div class="entry-head">
              <strong>
                {i + 1}. {e.name}
              </strong>{' '}
              <span class="muted">{MUSCLE[e.muscle]}</span> <VideoLink exercise={{ name: e.name, video_url: e.video_url }} />
            </div>
            <div class="entry-fields">
              <Field id={`${prefix}-${e.key}-sets`} label="Sets">
                <input id={`${prefix}-${e.key}-sets`} type="number" min={1} max={20} required value={e.sets} onInput={(v) => update(e.key, { sets: valueOf(v) })} />
              </Field>
              <Field id={`${prefix}-${e.key}-reps`} label="Reps">
                <input id={`${prefix}-${e.key}-reps`} required maxLength={7} value={e.reps} onInput={(v) => update(e.key, { reps: valueOf(v) })} title='A count ("8"), a range ("8-12"), "AMRAP" or seconds ("30s")' />
              </Field>
              <Field id={`${prefix}-${e.key}-load`} label="Load (kg)">
                <input id={`${prefix}-${e.key}-load`} inputMode="decimal" value={e.load} onInput={(v) => update(e.key, { load: valueOf(v) })} placeholder="optional" />
              </Field>
              <Field id={`${prefix}-${e.key}-rest`} label="Rest (s)">
                <input id={`${prefix}-${e.key}-rest`} type="number" min={0} max={900} value={e.rest} onInput={(v) => update(e.key, { rest: valueOf(v) })} placeholder="optional" />
              </Field>
            </div>
            <div class="row-actions">
              <button type="button" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move ${e.name} up`}>
                Up
              </button>
              <button type="button" disabled={i === entries.length - 1} onClick={() => move(i, 1)} aria-label={`Move ${e.name} down`}>
                Down
              </button>
              <button type="button" onClick={() => setEntries((list) => list.filter((x) => x.key !== e.key))} aria-label={`Remove ${e.name}`}>
                Remove
              </button>
            </div>
          </li>
        ))}
      </ol>
      <p class="hint">Reps: a count (8), a range (8-12), AMRAP (as many as possible) or seconds (30s). Sets 1 to 20, rest up to 900 seconds.</p>
      <details class="picker-box" open={!workout}>
        <summary>Add exercises from the catalog</summary>
        <ExercisePicker idPrefix={prefix} onPick={add} />
      </details>
      <FormActions error={error} busy={busy} label={workout ? 'Save workout' : 'Add workout'} onCancel={onCancel} />
    </form>
  );
}
