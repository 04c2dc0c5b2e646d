import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api/client.js';
import { ErrorMessage } from './parts.js';

export type Loaded<T> =
  | { state: 'loading'; data?: T; error?: undefined }
  | { state: 'ok'; data: T; error?: undefined }
  | { state: 'error'; data?: T; error: string };

/**
 * Runs `load` now and whenever `deps` change; a later run wins over an earlier one still in
 * flight (filters typed quickly never show an older answer last). `reload` runs it again.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> & { reload: () => void } {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  const run = useRef(0);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const mine = ++run.current;
    setResult((r) => ({ state: 'loading', data: r.data }));
    load().then(
      (data) => mine === run.current && setResult({ state: 'ok', data }),
      (err: unknown) => mine === run.current && setResult((r) => ({ state: 'error', error: messageOf(err), data: r.data })),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...result, reload };
}

/** The loaded content, a placeholder while loading the first time, or the error's message. */
export function Show<T>({ result, children, label }: { result: Loaded<T>; children: (data: T) => ComponentChildren; label?: string }) {
  if (result.state === 'error') return <ErrorMessage message={result.error} />;
  if (result.data === undefined) {
    return (
      <p class="loading" role="status">
        Loading{label ? ` ${label}` : ''}…
      </p>
    );
  }
  return <>{children(result.data)}</>;
}
