import createClient, { type Middleware } from 'openapi-fetch';
import { DASHBOARD_CSRF_HEADER, DASHBOARD_CSRF_VALUE } from '../../../src/http/dashboard-session.js';
import type { paths } from './openapi.js';

/**
 * The one way the dashboard talks to Tribes: openapi-fetch typed by the service's own OpenAPI
 * document (openapi.d.ts, written by `npm run dashboard:types`), so a renamed field or route
 * breaks `npm run typecheck`, not the page. Same origin: the session cookie goes with every
 * call; writes add the CSRF header the server requires of cookie sessions.
 */
/** An error answer of the API, in its envelope: the message is meant to be shown as it is. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Array<{ field: string; message: string }> = [],
  ) {
    super(message);
  }
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD') request.headers.set(DASHBOARD_CSRF_HEADER, DASHBOARD_CSRF_VALUE);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(csrf);

/** Subscribers told when an answer says the session is gone (401): the shell shows the sign-in page. */
const signedOut = new Set<() => void>();
export const onSignedOut = (fn: () => void) => {
  signedOut.add(fn);
  return () => void signedOut.delete(fn);
};

type Envelope = { error?: { code?: string; message?: string; details?: Array<{ field: string; message: string }> } };

/** The body of a successful answer, or an ApiError carrying the API's own message. */
export function ok<D>(result: { data?: D; error?: unknown; response: Response }): D {
  const { data, error, response } = result;
  if (error === undefined && data !== undefined) return data;
  const envelope = (error ?? {}) as Envelope;
  if (response.status === 401) for (const fn of signedOut) fn();
  throw new ApiError(
    response.status,
    envelope.error?.code ?? 'http_error',
    envelope.error?.message ?? `The server answered ${response.status} ${response.statusText || ''}`.trim(),
    envelope.error?.details ?? [],
  );
}

/** What a caught failure says to a person: the API's message, or that the network failed. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return 'Could not reach Tribes: check your connection and try again.';
  return err instanceof Error ? err.message : String(err);
}
