import { Field, valueOf } from '../ui/parts.js';
import { newPoll, type Draft, type MediaType, type PollDraft } from './feed-draft.js';

const MEDIA_MAX = 10; // the API's limit, repeated only to disable the button at it
const OPTIONS_MAX = 10;
const OPTIONS_MIN = 2;
const MEDIA_TYPES: Array<[MediaType, string]> = [
  ['image', 'Image'],
  ['video', 'Video'],
  ['audio', 'Audio'],
];

type Media = Draft['media'];

/** Attachments as the API takes them: a kind and an https address each, in display order. */
export function MediaEditor({ media, onChange }: { media: Media; onChange: (media: Media) => void }) {
  const set = (i: number, patch: Partial<Media[number]>) => onChange(media.map((m, j) => (j === i ? { ...m, ...patch } : m)));
  return (
    <fieldset class="composer-group">
      <legend>Attachments</legend>
      <p class="hint">Links to images, videos or audio hosted elsewhere (https addresses); members' apps show them under the post.</p>
      {media.map((m, i) => (
        <div class="media-row">
          <Field id={`media-type-${i}`} label={`Attachment ${i + 1} type`}>
            <select id={`media-type-${i}`} value={m.type} onChange={(e) => set(i, { type: valueOf(e) as MediaType })}>
              {MEDIA_TYPES.map(([value, label]) => (
                <option value={value}>{label}</option>
              ))}
            </select>
          </Field>
          <Field id={`media-url-${i}`} label={`Attachment ${i + 1} address`}>
            <input id={`media-url-${i}`} type="url" inputMode="url" placeholder="https://" value={m.url} onInput={(e) => set(i, { url: valueOf(e) })} />
          </Field>
          <button type="button" class="remove" onClick={() => onChange(media.filter((_, j) => j !== i))}>
            Remove<span class="sr-only"> attachment {i + 1}</span>
          </button>
        </div>
      ))}
      <button type="button" disabled={media.length >= MEDIA_MAX} onClick={() => onChange([...media, { type: 'image', url: '' }])}>
        Add an attachment
      </button>
    </fieldset>
  );
}

/**
 * The poll: a question and 2 to 10 options. Once members voted (`fixed`), the API keeps the
 * options and the choice mode and refuses removing the poll, so those controls are shown as
 * they are rather than offered and refused.
 */
export function PollEditor({ poll, fixed, onChange }: { poll: PollDraft | null; fixed: boolean; onChange: (poll: PollDraft | null) => void }) {
  if (!poll) {
    return (
      <div class="composer-group">
        <button type="button" onClick={() => onChange(newPoll())}>
          Add a poll
        </button>
      </div>
    );
  }
  const set = (patch: Partial<PollDraft>) => onChange({ ...poll, ...patch });
  const setOption = (i: number, text: string) => set({ options: poll.options.map((o, j) => (j === i ? text : o)) });
  return (
    <fieldset class="composer-group">
      <legend>Poll</legend>
      {fixed ? <p class="hint">Members have voted: the options and the choice mode stay as they are; the question and the closing time can change.</p> : null}
      <Field id="poll-question" label="Poll question">
        <input id="poll-question" value={poll.question} onInput={(e) => set({ question: valueOf(e) })} />
      </Field>
      {poll.options.map((text, i) => (
        <div class="option-row">
          <Field id={`poll-option-${i}`} label={`Option ${i + 1}`}>
            <input id={`poll-option-${i}`} value={text} readOnly={fixed} onInput={(e) => setOption(i, valueOf(e))} />
          </Field>
          {!fixed && poll.options.length > OPTIONS_MIN ? (
            <button type="button" class="remove" onClick={() => set({ options: poll.options.filter((_, j) => j !== i) })}>
              Remove<span class="sr-only"> option {i + 1}</span>
            </button>
          ) : null}
        </div>
      ))}
      {!fixed ? (
        <button type="button" disabled={poll.options.length >= OPTIONS_MAX} onClick={() => set({ options: [...poll.options, ''] })}>
          Add an option
        </button>
      ) : null}
      <label class="check">
        <input type="checkbox" checked={poll.multiple_choice} disabled={fixed} onChange={(e) => set({ multiple_choice: e.currentTarget.checked })} />
        Members may choose several options
      </label>
      <Field id="poll-closes" label="Voting closes (optional, your time)" hint="Empty: open as long as the post exists.">
        <input id="poll-closes" type="datetime-local" value={poll.closes_at} aria-describedby="poll-closes-hint" onInput={(e) => set({ closes_at: valueOf(e) })} />
      </Field>
      {!fixed ? (
        <button type="button" class="remove" onClick={() => onChange(null)}>
          Remove the poll
        </button>
      ) : null}
    </fieldset>
  );
}
