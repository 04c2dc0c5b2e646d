import type { ComponentChildren, TargetedEvent } from 'preact';
import { count, dateTime, nearTime } from '../format.js';

export function ErrorMessage({ message }: { message: string }) {
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function Card({ title, children, actions, class: className }: { title?: string; children: ComponentChildren; actions?: ComponentChildren; class?: string }) {
  return (
    <section class={`card ${className ?? ''}`} aria-label={title}>
      {title || actions ? (
        <header class="card-head">
          {title ? <h2>{title}</h2> : null}
          {actions ? <div class="actions">{actions}</div> : null}
        </header>
      ) : null}
      {children}
    </section>
  );
}

/** A headline figure with its change over the chosen window (omitted when none is known). */
export function Stat({ label, value, change, hint, good = 'up', testId }: { label: string; value: string; change?: { text: string; sign: number }; hint?: string; good?: 'up' | 'down'; testId?: string }) {
  const tone = !change || change.sign === 0 ? 'flat' : (change.sign > 0) === (good === 'up') ? 'good' : 'bad';
  return (
    <div class="stat" data-testid={testId}>
      <div class="stat-label">{label}</div>
      <div class="stat-value">{value}</div>
      {change ? <div class={`stat-change ${tone}`}>{change.text}</div> : null}
      {hint ? <div class="stat-hint">{hint}</div> : null}
    </div>
  );
}

export function Badge({ children, tone = 'neutral' }: { children: ComponentChildren; tone?: 'neutral' | 'good' | 'warn' | 'bad' }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

/** Page links with the total; an estimated total (members over 10,000) says so. */
export function Pager({ page, pages, total, estimate, onPage, noun }: { page: number; pages: number; total: number; estimate?: boolean; onPage: (page: number) => void; noun: string }) {
  return (
    <nav class="pager" aria-label={`${noun} pages`}>
      <span>
        {estimate ? 'about ' : ''}
        {count(total)} {noun}
        {pages > 1 ? ` · page ${count(page)} of ${estimate ? 'about ' : ''}${count(pages)}` : ''}
      </span>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

type FieldProps = { label: string; hint?: string; children: ComponentChildren; id: string };

/** A labelled control: the label names the input for screen readers, the hint is described-by. */
export function Field({ label, hint, children, id }: FieldProps) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

export function Table({ caption, head, children }: { caption: string; head: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A time as `nearTime` reads it ("in 5 sec.", "12 min. ago", else the date and time), the
 * exact one on hover. `notBefore` shows a time already past as "now" (a retry that is due).
 */
export function When({ iso, notBefore }: { iso: string | null | undefined; notBefore?: boolean }) {
  if (!iso) return <>—</>;
  const now = Date.now();
  const shown = notBefore && Date.parse(iso) < now ? new Date(now).toISOString() : iso;
  return (
    <time dateTime={iso} title={dateTime(iso)}>
      {nearTime(shown, now)}
    </time>
  );
}

export const Empty = ({ children }: { children: ComponentChildren }) => <p class="empty">{children}</p>;

export type InputEvent = TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>;
export const valueOf = (e: InputEvent) => e.currentTarget.value;

/** A form's end: its error as the API's message, then submit (saying it is busy) and Cancel. */
export function FormActions(props: { error: string | undefined; busy: boolean; label: string; onCancel: () => void; disabled?: boolean }) {
  const { error, busy, label, onCancel } = props;
  return (
    <>
      {error ? <ErrorMessage message={error} /> : null}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || props.disabled}>
          {busy ? 'Saving…' : label}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </>
  );
}
