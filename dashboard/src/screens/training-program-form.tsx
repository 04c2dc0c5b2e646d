import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { Field, FormActions, valueOf } from '../ui/parts.js';
import type { Community } from './communities-labels.js';
import { GOAL, LEVEL, type Program } from './training-labels.js';

/** Creates a program in a community, or edits one (its community cannot change: PATCH has no such field). */
export function ProgramForm({ communities, program, onSaved, onCancel }: { communities: Community[]; program?: Program; onSaved: (p: Program) => void; onCancel: () => void }) {
  const [communityId, setCommunityId] = useState(program?.community_id ?? communities[0]?.id ?? '');
  const [name, setName] = useState(program?.name ?? '');
  const [description, setDescription] = useState(program?.description ?? '');
  const [weeks, setWeeks] = useState(String(program?.duration_weeks ?? 8));
  const [perWeek, setPerWeek] = useState(String(program?.frequency_per_week ?? 3));
  const [level, setLevel] = useState<Program['level']>(program?.level ?? 'beginner');
  const [goal, setGoal] = useState<Program['goal']>(program?.goal ?? 'hypertrophy');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const prefix = program ? `program-${program.id}` : 'new-program';

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const body = { name, description, duration_weeks: Number(weeks), frequency_per_week: Number(perWeek), level, goal };
    try {
      const saved = program
        ? ok(await api.PATCH('/api/v1/workout-programs/{id}', { params: { path: { id: program.id } }, body })).data
        : ok(await api.POST('/api/v1/workout-programs', { body: { community_id: communityId, ...body } })).data;
      onSaved(saved);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} class="stack-form" data-testid="program-form">
      {program ? null : (
        <Field id={`${prefix}-community`} label="Community" hint="Members subscribed to it see the program in the app.">
          <select id={`${prefix}-community`} required aria-describedby={`${prefix}-community-hint`} value={communityId} onChange={(e) => setCommunityId(valueOf(e))}>
            {communities.map((c) => (
              <option value={c.id}>{c.name}</option>
            ))}
          </select>
        </Field>
      )}
      <Field id={`${prefix}-name`} label="Program name">
        <input id={`${prefix}-name`} required maxLength={200} value={name} onInput={(e) => setName(valueOf(e))} />
      </Field>
      <Field id={`${prefix}-description`} label="Description" hint="Optional; Markdown is allowed.">
        <textarea id={`${prefix}-description`} maxLength={20000} aria-describedby={`${prefix}-description-hint`} value={description} onInput={(e) => setDescription(valueOf(e))} />
      </Field>
      <div class="filters">
        <Field id={`${prefix}-weeks`} label="Length in weeks" hint="1 to 52">
          <input id={`${prefix}-weeks`} type="number" min={1} max={52} required aria-describedby={`${prefix}-weeks-hint`} value={weeks} onInput={(e) => setWeeks(valueOf(e))} />
        </Field>
        <Field id={`${prefix}-per-week`} label="Workouts per week" hint="1 to 7">
          <input id={`${prefix}-per-week`} type="number" min={1} max={7} required aria-describedby={`${prefix}-per-week-hint`} value={perWeek} onInput={(e) => setPerWeek(valueOf(e))} />
        </Field>
        <Field id={`${prefix}-level`} label="Level">
          <select id={`${prefix}-level`} value={level} onChange={(e) => setLevel(valueOf(e) as Program['level'])}>
            {Object.entries(LEVEL).map(([k, label]) => (
              <option value={k}>{label}</option>
            ))}
          </select>
        </Field>
        <Field id={`${prefix}-goal`} label="Goal">
          <select id={`${prefix}-goal`} value={goal} onChange={(e) => setGoal(valueOf(e) as Program['goal'])}>
            {Object.entries(GOAL).map(([k, label]) => (
              <option value={k}>{label}</option>
            ))}
          </select>
        </Field>
      </div>
      <FormActions error={error} busy={busy} label={program ? 'Save program' : 'Create program'} onCancel={onCancel} />
    </form>
  );
}
