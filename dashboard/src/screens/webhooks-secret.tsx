import { useState } from 'preact/hooks';

/**
 * A signing secret, shown this once (the API never shows it again): in a read-only field to
 * select, with a copy button, and a plain warning to store it now.
 */
export function SecretOnce({ secret, title, onDismiss }: { secret: string | null; title: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<string>();
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret ?? '');
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('Could not copy: select the secret and copy it yourself.');
    }
  }
  return (
    <section class="card secret-once" aria-labelledby="secret-once-title" data-testid="secret-once">
      <h2 id="secret-once-title">{title}</h2>
      {secret ? (
        <>
          <p>
            Copy this signing secret now and store it with your receiver: <strong>it is shown only this once</strong>. Your receiver uses it to check that deliveries
            come from Tribes (any Standard Webhooks library does this).
          </p>
          <div class="field">
            <label for="secret-once-value">Signing secret</label>
            <input id="secret-once-value" readOnly value={secret} data-testid="secret-value" onFocus={(e) => e.currentTarget.select()} />
          </div>
        </>
      ) : (
        <p>This answer came from a repeated request, so it carries no secret. Rotate the secret to get a new one.</p>
      )}
      <div class="actions">
        {secret ? (
          <button type="button" class="primary" onClick={copy}>
            Copy secret
          </button>
        ) : null}
        <button type="button" onClick={onDismiss}>
          I have stored it
        </button>
      </div>
      <p role="status" class="hint">
        {copied ?? ''}
      </p>
    </section>
  );
}
