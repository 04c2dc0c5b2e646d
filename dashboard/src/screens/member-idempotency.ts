import { useRef } from 'preact/hooks';

/**
 * An Idempotency-Key per dialog and request body: pressing confirm again after a failure (a
 * 502 "the processor did not confirm", a lost connection) sends the same key, so the API
 * answers with what was already done instead of cancelling or refunding twice. A changed body
 * is a new request and gets a new key (the API refuses a key reused with another body).
 */
export function useIdempotencyKey(): (body: unknown) => string {
  const last = useRef<{ body: string; key: string }>(undefined);
  return (body) => {
    const text = JSON.stringify(body);
    if (last.current?.body !== text) last.current = { body: text, key: newKey() };
    return last.current.key;
  };
}

// randomUUID needs a secure context (https or localhost); elsewhere a random key of the same use.
const newKey = () =>
  typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
