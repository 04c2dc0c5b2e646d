import { useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { count } from '../format.js';
import { ErrorMessage } from '../ui/parts.js';
import type { ListQuery } from './members-query.js';

type Progress = { state: 'idle' } | { state: 'running'; rows: number } | { state: 'done'; rows: number } | { state: 'error'; message: string };

/**
 * "Export CSV": the server's own export (GET /members/export.csv, the list's filters and order,
 * streamed in batches), read here as it arrives so the progress shows against the list's total,
 * then saved as members.csv. Cancel aborts the request, which ends the export on the server too.
 */
export function MembersExport({ query, total, estimate }: { query: Omit<ListQuery, 'page' | 'limit'>; total: number; estimate: boolean }) {
  const [progress, setProgress] = useState<Progress>({ state: 'idle' });
  const abort = useRef<AbortController | undefined>(undefined);
  // Leaving the screen ends a running export rather than saving a file nobody waits for.
  useEffect(() => () => abort.current?.abort(), []);

  async function run() {
    const controller = new AbortController();
    abort.current = controller;
    setProgress({ state: 'running', rows: 0 });
    try {
      const body = ok(await api.GET('/api/v1/members/export.csv', { params: { query }, parseAs: 'stream', signal: controller.signal }));
      // A 200 always has a body; null would be a broken answer, read as an empty file.
      const stream = body ?? new ReadableStream<Uint8Array<ArrayBuffer>>({ start: (c) => c.close() });
      const { chunks, rows } = await readCsv(stream, (n) => setProgress({ state: 'running', rows: n })).catch((err: unknown) => {
        // Once the answer began, a failure cuts the file short: say so rather than "no connection".
        throw controller.signal.aborted ? err : new Error('The export stopped before it finished, so nothing was saved. Try again.');
      });
      save(new Blob(chunks, { type: 'text/csv;charset=utf-8' }), 'members.csv');
      setProgress({ state: 'done', rows });
    } catch (err) {
      setProgress(controller.signal.aborted ? { state: 'idle' } : { state: 'error', message: messageOf(err) });
    } finally {
      if (abort.current === controller) abort.current = undefined;
    }
  }

  const running = progress.state === 'running';
  return (
    <div class="members-export">
      <div class="actions">
        <button type="button" onClick={run} disabled={running} data-testid="export-csv">
          {running ? 'Exporting…' : 'Export CSV'}
        </button>
        {running ? (
          <button type="button" onClick={() => abort.current?.abort()} data-testid="export-cancel">
            Cancel export
          </button>
        ) : null}
      </div>
      {running ? (
        <div class="export-progress" data-testid="export-progress">
          <label for="export-progress-bar">
            Exporting {estimate ? 'about ' : ''}
            {count(total)} members: {count(progress.rows)} rows so far
          </label>
          {/* The total is the list's; an estimated one may be passed, so the bar stops at full. */}
          <progress id="export-progress-bar" max={Math.max(total, 1)} value={Math.min(progress.rows, total)} />
        </div>
      ) : null}
      <div role="status" class="members-export-status">
        {progress.state === 'done' ? <p class="notice">Saved members.csv with {count(progress.rows)} members.</p> : null}
      </div>
      {progress.state === 'error' ? <ErrorMessage message={`The export failed: ${progress.message}`} /> : null}
    </div>
  );
}

/**
 * Reads the CSV as it streams, counting the rows after the header. A quoted field may hold a
 * line break (RFC 4180), so only line ends outside quotes count; a doubled quote inside a
 * field toggles twice and changes nothing.
 */
async function readCsv(stream: ReadableStream<Uint8Array<ArrayBuffer>>, onRows: (rows: number) => void) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const chunks: Array<Uint8Array<ArrayBuffer>> = [];
  let lines = 0;
  let quoted = false;
  let last = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    const text = decoder.decode(value, { stream: true });
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '"') quoted = !quoted;
      else if (c === '\n' && !quoted) lines++;
    }
    if (text) last = text;
    onRows(Math.max(0, lines - 1));
  }
  // The last row may end without a line break.
  const unterminated = last !== '' && !last.endsWith('\n') ? 1 : 0;
  return { chunks, rows: Math.max(0, lines + unterminated - 1) };
}

function save(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // The download has taken the blob by the next task; the URL can go.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
