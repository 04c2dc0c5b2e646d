import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api/client.js';
import { ErrorMessage } from './parts.js';

/**
 * A confirmation that states what will happen before anything does (a cancel, a refund): a
 * modal <dialog> (the browser traps focus and Escape closes it). The action's error stays in
 * the dialog as the API's message; success closes it and calls `onDone`.
 */
export function Confirm(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  onDone?: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  async function confirm(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await props.onConfirm();
      ref.current?.close();
      props.onDone?.();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }
  return (
    <dialog ref={ref} class="confirm" aria-labelledby="confirm-title" onClose={props.onClose}>
      <form method="dialog" onSubmit={confirm}>
        <h2 id="confirm-title">{props.title}</h2>
        <div class="confirm-body">{props.children}</div>
        {error ? <ErrorMessage message={error} /> : null}
        <div class="actions">
          <button type="button" onClick={() => ref.current?.close()} disabled={busy}>
            Keep as it is
          </button>
          <button type="submit" class={props.danger ? 'danger' : 'primary'} disabled={busy}>
            {busy ? 'Working…' : props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
