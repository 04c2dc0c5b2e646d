import { mediaUrlProblem } from '../posts/media-url.js';
import { ENDPOINT_URL_MAX } from './endpoints.schemas.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/**
 * Why `url` cannot be an endpoint's, in words its author can act on; null when it can. The
 * rules of a post's media URL (public https, no credentials, no private address or local
 * name), since this service itself will call it; sender.ts checks the resolved address again
 * at every send. With the simulator (development, tests, the demo) a receiver on this machine
 * (`http://127.0.0.1:PORT/…`) is allowed too, as DESIGN §9 says.
 */
export function endpointUrlProblem(url: string, allowLoopback: boolean): string | null {
  if (allowLoopback) {
    try {
      const parsed = new URL(url);
      if (LOOPBACK_HOSTS.has(parsed.hostname) && (parsed.protocol === 'http:' || parsed.protocol === 'https:') && url.length <= ENDPOINT_URL_MAX) return null;
    } catch {
      // The rules below say what is wrong with it.
    }
  }
  const problem = mediaUrlProblem(url);
  if (problem === null) return null;
  if (problem.startsWith('must be a complete web address')) return 'must be a complete web address, like https://hooks.example.com/tribes';
  return allowLoopback ? `${problem} (with the simulator, http://127.0.0.1:PORT/… is also allowed)` : problem;
}
