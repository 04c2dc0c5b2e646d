import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { money } from '../format.js';
import { useLoad } from '../ui/load.js';
import { ErrorMessage, Field, FormActions, valueOf } from '../ui/parts.js';
import { PERIOD, type Community } from './communities-labels.js';
import { ExercisePicker } from './training-exercise-picker.js';
import { METRIC, type Challenge } from './training-labels.js';

type Metric = Challenge['metric'];

/** An ISO instant as the value of a datetime-local input, in the browser's time zone. */
function localInput(iso: string): string {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/**
 * Creates a challenge, or edits one. The API lets the name and rules change at any time but
 * the scoring, window and minimum tier only while it is scheduled, so those fields are locked
 * once it started. A duration outside 21–90 days is accepted with a warning, shown after.
 */
export function ChallengeForm({ communities, challenge, exerciseName, onSaved, onCancel }: { communities: Community[]; challenge?: Challenge; exerciseName?: string; onSaved: (c: Challenge) => void; onCancel: () => void }) {
  const open = communities.filter((c) => c.status === 'active');
  const [communityId, setCommunityId] = useState(challenge?.community_id ?? open[0]?.id ?? '');
  const [name, setName] = useState(challenge?.name ?? '');
  const [description, setDescription] = useState(challenge?.description ?? '');
  const [metric, setMetric] = useState<Metric>(challenge?.metric ?? 'workouts_count');
  const [exercise, setExercise] = useState(challenge?.exercise_id ? { id: challenge.exercise_id, name: exerciseName ?? '' } : undefined);
  const [days, setDays] = useState(String(challenge?.duration_days ?? 30));
  const [startsAt, setStartsAt] = useState(challenge ? localInput(challenge.starts_at) : localInput(new Date(Date.now() + 86_400_000).toISOString().slice(0, 11) + '06:00:00'));
  const [tierMin, setTierMin] = useState(challenge?.tier_min_id ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const locked = challenge !== undefined && challenge.status !== 'scheduled';
  const prefix = challenge ? `challenge-${challenge.id}` : 'new-challenge';
  const tiers = useLoad(
    async () => (communityId ? ok(await api.GET('/api/v1/tiers', { params: { query: { community_id: communityId, is_active: true, page: 1, limit: 100 } } })).data : []),
    [communityId],
  );

  async function submit(event: Event) {
    event.preventDefault();
    if (!locked && metric === 'workouts_with_exercise' && !exercise) return setError('Choose the exercise that scores.');
    setBusy(true);
    setError(undefined);
    const starts = new Date(startsAt).toISOString();
    const rules = {
      metric,
      exercise_id: metric === 'workouts_with_exercise' ? exercise!.id : null,
      duration_days: Number(days),
      tier_min_id: tierMin || null,
    };
    try {
      const saved = challenge
        ? ok(
            await api.PATCH('/api/v1/challenges/{id}', {
              params: { path: { id: challenge.id } },
              body: { name, description, ...(locked ? {} : { ...rules, ...(startsAt !== localInput(challenge.starts_at) ? { starts_at: starts } : {}) }) },
            }),
          ).data
        : ok(await api.POST('/api/v1/challenges', { body: { community_id: communityId, name, description, starts_at: starts, ...rules } })).data;
      onSaved(saved);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} class="stack-form" data-testid="challenge-form">
      {challenge ? null : (
        <Field id={`${prefix}-community`} label="Community" hint="Its members with a live subscription can join. Paused communities take no new challenges.">
          <select id={`${prefix}-community`} required aria-describedby={`${prefix}-community-hint`} value={communityId} onChange={(e) => (setCommunityId(valueOf(e)), setTierMin(''))}>
            {open.map((c) => (
              <option value={c.id}>{c.name}</option>
            ))}
          </select>
        </Field>
      )}
      <Field id={`${prefix}-name`} label="Challenge name">
        <input id={`${prefix}-name`} required maxLength={200} value={name} onInput={(e) => setName(valueOf(e))} />
      </Field>
      <Field id={`${prefix}-description`} label="Rules" hint="Optional, up to 5,000 characters, shown to members.">
        <textarea id={`${prefix}-description`} maxLength={5000} aria-describedby={`${prefix}-description-hint`} value={description} onInput={(e) => setDescription(valueOf(e))} />
      </Field>
      {locked ? <p class="notice">The challenge has started: only its name and rules can change now.</p> : null}
      <Field id={`${prefix}-metric`} label="What scores" hint={METRIC[metric].explain}>
        <select id={`${prefix}-metric`} disabled={locked} aria-describedby={`${prefix}-metric-hint`} value={metric} onChange={(e) => setMetric(valueOf(e) as Metric)}>
          {Object.entries(METRIC).map(([k, m]) => (
            <option value={k}>{m.label}</option>
          ))}
        </select>
      </Field>
      {metric === 'workouts_with_exercise' ? (
        <fieldset class="picker-box" disabled={locked}>
          <legend>Exercise that scores: {exercise ? <strong data-testid="challenge-exercise">{exercise.name}</strong> : 'none chosen yet'}</legend>
          {locked ? null : <ExercisePicker idPrefix={prefix} pickLabel="Choose" onPick={(x) => setExercise({ id: x.id, name: x.name })} />}
        </fieldset>
      ) : null}
      <div class="filters">
        <Field id={`${prefix}-starts`} label="Starts" hint="Your local time. A start in the past runs the challenge at once.">
          <input id={`${prefix}-starts`} type="datetime-local" required disabled={locked} aria-describedby={`${prefix}-starts-hint`} value={startsAt} onInput={(e) => setStartsAt(valueOf(e))} />
        </Field>
        <Field id={`${prefix}-days`} label="Length in days" hint="1 to 365; 21 to 90 is recommended.">
          <input id={`${prefix}-days`} type="number" min={1} max={365} required disabled={locked} aria-describedby={`${prefix}-days-hint`} value={days} onInput={(e) => setDays(valueOf(e))} />
        </Field>
        <Field id={`${prefix}-tier`} label="Minimum tier" hint="Members of this tier or a higher one can join.">
          <select id={`${prefix}-tier`} disabled={locked} aria-describedby={`${prefix}-tier-hint`} value={tierMin} onChange={(e) => setTierMin(valueOf(e))}>
            <option value="">Every tier</option>
            {(tiers.data ?? []).map((t) => (
              <option value={t.id}>
                {t.name} ({money(t.price_cents, t.currency)} per {PERIOD[t.billing_period]})
              </option>
            ))}
          </select>
        </Field>
      </div>
      {tiers.state === 'error' ? <ErrorMessage message={tiers.error} /> : null}
      <FormActions error={error} busy={busy} disabled={!challenge && !communityId} label={challenge ? 'Save challenge' : 'Create challenge'} onCancel={onCancel} />
    </form>
  );
}
