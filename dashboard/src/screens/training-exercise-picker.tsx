import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { count } from '../format.js';
import { Show, useLoad } from '../ui/load.js';
import { Empty, Field, valueOf } from '../ui/parts.js';
import { MUSCLE, type Exercise } from './training-labels.js';

type Muscle = Exercise['muscle_group'];

export const words = (key: string) => key.replace(/_/g, ' ');

/** The exercise's demonstration video, when the catalog (or the creator) has one. */
export function VideoLink({ exercise }: { exercise: Pick<Exercise, 'name' | 'video_url'> }) {
  if (!exercise.video_url) return null;
  return (
    <a href={exercise.video_url} target="_blank" rel="noopener noreferrer" data-testid="exercise-video">
      Watch the video<span class="sr-only"> of {exercise.name} (opens a new tab)</span>
    </a>
  );
}

/**
 * Searches the catalog and the creator's own exercises (GET /exercises: `q` in the English or
 * Portuguese name, `muscle_group`) and hands the chosen one to `onPick`. Typing waits a
 * quarter second before asking, and a later answer always wins (useLoad).
 */
export function ExercisePicker({ idPrefix, onPick, pickLabel = 'Add' }: { idPrefix: string; onPick: (e: Exercise) => void; pickLabel?: string }) {
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  const [muscle, setMuscle] = useState<Muscle | ''>('');
  useEffect(() => {
    const timer = setTimeout(() => setQ(text.trim()), 250);
    return () => clearTimeout(timer);
  }, [text]);
  const results = useLoad(
    async () => ok(await api.GET('/api/v1/exercises', { params: { query: { page: 1, limit: 20, ...(q ? { q } : {}), ...(muscle ? { muscle_group: muscle } : {}) } } })),
    [q, muscle],
  );
  return (
    <div class="picker" data-testid="exercise-picker">
      <div class="filters">
        <Field id={`${idPrefix}-q`} label="Search exercises">
          <input id={`${idPrefix}-q`} type="search" maxLength={100} value={text} onInput={(e) => setText(valueOf(e))} placeholder="e.g. squat, supino" />
        </Field>
        <Field id={`${idPrefix}-muscle`} label="Muscle group">
          <select id={`${idPrefix}-muscle`} value={muscle} onChange={(e) => setMuscle(valueOf(e) as Muscle | '')}>
            <option value="">Any</option>
            {Object.entries(MUSCLE).map(([key, label]) => (
              <option value={key}>{label}</option>
            ))}
          </select>
        </Field>
      </div>
      <Show result={results} label="exercises">
        {({ data, pagination }) =>
          data.length === 0 ? (
            <Empty>No exercise matches: try another word or any muscle group.</Empty>
          ) : (
            <>
              <p class="muted" role="status">
                {pagination.total > data.length ? `The first ${count(data.length)} of ${count(pagination.total)}: type more to narrow them.` : `${count(pagination.total)} found.`}
              </p>
              <ul class="picker-results">
                {data.map((e) => (
                  <li data-testid="exercise-result">
                    <span>
                      <strong>{e.name}</strong>
                      {e.name_pt ? <span class="muted"> · {e.name_pt}</span> : null}
                      <br />
                      <small class="muted">
                        {MUSCLE[e.muscle_group]} · {e.equipment.map(words).join(', ')}
                        {e.custom ? ' · your exercise' : ''}
                      </small>{' '}
                      <VideoLink exercise={e} />
                    </span>
                    <button type="button" onClick={() => onPick(e)} aria-label={`${pickLabel} ${e.name}`}>
                      {pickLabel}
                    </button>
                  </li>
                ))}
              </ul>
            </>
          )
        }
      </Show>
    </div>
  );
}
