import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api/client.js';
import { ErrorMessage } from './parts.js';

export type Loaded<T> =
  | { state: 'loading'; data?: T; error?: undefined }
  | { state: 'ok'; data: T; error?: undefined }
  | { state: 'error'; data?: T; error: string };

export interface LoadOptions<T> {
  /**
   * Load again this long (ms) after each answer, while the page is visible; a function picks
   * it from the answer shown (undefined: no refresh). While the tab is hidden the refresh
   * waits, and runs as soon as the tab is shown again.
   */
  refreshMs?: number | ((data: T) => number | undefined);
}

/**
 * Runs `load` now and whenever `deps` change; a later run wins over an earlier one still in
 * flight, which is aborted (filters typed quickly never show an older answer last, and a
 * refresh never overlaps another request: pass `signal` on to the API). `reload` runs it
 * again. A refresh keeps the rows shown until the new ones arrive, and a refresh that fails
 * keeps them too (the next one tries again) rather than replacing them with an error.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], options: LoadOptions<T> = {}): Loaded<T> & { reload: () => void } {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  // The latest closures, so a refresh timer set by an earlier render calls today's `load`.
  const latest = useRef({ load, options });
  latest.current = { load, options };
  // The deps the last run started for: a render with others (a filter just changed) answers
  // loading at once, before its effect starts the run, so nothing reads the old rows as new.
  const ranFor = useRef<unknown[] | undefined>(undefined);
  const now = [...deps, tick];
  const behind = ranFor.current !== undefined && now.some((d, i) => !Object.is(d, ranFor.current![i]));
  useEffect(() => {
    ranFor.current = now;
    let controller: AbortController | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let dueWhileHidden = false;
    let shown: T | undefined;
    const schedule = () => {
      const { refreshMs } = latest.current.options;
      const ms = typeof refreshMs === 'function' ? (shown === undefined ? undefined : refreshMs(shown)) : refreshMs;
      if (ms === undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        if (document.visibilityState === 'hidden') dueWhileHidden = true;
        else run(true);
      }, ms);
    };
    const run = (refresh: boolean) => {
      const mine = new AbortController();
      controller = mine;
      if (!refresh) setResult((r) => ({ state: 'loading', data: r.data }));
      latest.current.load(mine.signal).then(
        (data) => {
          if (controller !== mine) return;
          controller = undefined;
          shown = data;
          setResult({ state: 'ok', data });
          schedule();
        },
        (err: unknown) => {
          if (controller !== mine) return;
          controller = undefined;
          if (refresh) schedule();
          else setResult((r) => ({ state: 'error', error: messageOf(err), data: r.data }));
        },
      );
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible' && dueWhileHidden && !controller) {
        dueWhileHidden = false;
        run(true);
      }
    };
    document.addEventListener('visibilitychange', onVisibility);
    run(false);
    return () => {
      document.removeEventListener('visibilitychange', onVisibility);
      clearTimeout(timer);
      const stale = controller;
      controller = undefined;
      stale?.abort();
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return behind ? { state: 'loading', data: result.data, reload } : { ...result, reload };
}

/**
 * The loaded content, a placeholder while loading the first time, or the error's message.
 * While a change (a filter, a page, an action's reload) loads again, the rows shown stay and
 * a visually hidden status says they are being updated: a screen reader hears it, and a
 * browser test waits for it to go (`.loading`) before reading rows that may still be the old ones.
 * `saysUpdating`: the children show their own "Updating…" (the members list, a member).
 */
export function Show<T>({ result, children, label, saysUpdating }: { result: Loaded<T>; children: (data: T) => ComponentChildren; label?: string; saysUpdating?: boolean }) {
  if (result.state === 'error') return <ErrorMessage message={result.error} />;
  if (result.data === undefined) {
    return (
      <p class="loading" role="status">
        Loading{label ? ` ${label}` : ''}…
      </p>
    );
  }
  return (
    <>
      {result.state === 'loading' && !saysUpdating ? (
        <p class="loading sr-only" role="status">
          Updating{label ? ` ${label}` : ''}…
        </p>
      ) : null}
      {children(result.data)}
    </>
  );
}
