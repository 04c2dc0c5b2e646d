import { useEffect, useMemo, useState } from 'preact/hooks';

/**
 * Hash routes (#/members/ID?status=at_risk): the server serves one page at /dashboard/, and
 * a reload or a shared link opens the same screen with the same filters.
 */
export interface Route {
  /** Path segments after "#/": ["members", "ID"]. */
  parts: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', search = ''] = raw.split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(search) };
}

export function href(path: string, query?: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const search = params.toString();
  return `#/${path}${search ? `?${search}` : ''}`;
}

export const navigate = (path: string, query?: Record<string, string | number | undefined | null>) => {
  location.hash = href(path, query);
};

export function useRoute(): Route {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const update = () => setHash(location.hash);
    addEventListener('hashchange', update);
    // The listener starts after the first paint: a hash changed before then (a link followed
    // while the app booted) fired no event this listener heard, so read it once now.
    update();
    return () => removeEventListener('hashchange', update);
  }, []);
  return useMemo(() => parseHash(hash), [hash]);
}
