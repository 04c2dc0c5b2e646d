import crypto from 'node:crypto';
import { fieldPaths, mainBranch, validObject, withField, type Fixtures, type Operation } from './operations.js';
import type { Rng } from './random.js';
import { CONTENT_TYPES, IDEMPOTENCY_KEYS, JSON_VALUES, PATH_SEGMENTS, QUERY_SHAPES, QUERY_VALUES, RAW_BODIES, RAW_NUMBERS } from './values.js';

export interface HostileRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** What was done to the valid request, for the failure report. */
  what: string;
}

/** How many of each catalogue one operation draws; the totals keep the sweep over 2,000 requests. */
const PER_OP = { rawBodies: 9, contentTypes: 5, valuesPerField: 6, rawNumbersPerBody: 3, queryValuesPerParam: 9, queryShapes: 4, compound: 6 };

const RAW = '"__hostile_raw__"';

/**
 * The requests the sweep sends to one operation: its valid request, then that request with
 * one part made hostile (a path id, a query parameter, a body field, the whole body, its
 * content type, a header), then a few with several parts hostile at once.
 */
export function hostileRequests(op: Operation, fx: Fixtures, auth: Record<string, string>, rng: Rng): HostileRequest[] {
  const resource = (param: string) => op.path.match(new RegExp(`/([a-z-]+)/\\{${param}\\}`))?.[1] ?? '';
  // A DELETE of a real resource would change what later requests find; it gets an unknown id.
  const validPath = (param: string) => (op.method === 'DELETE' ? crypto.randomUUID() : (fx.byResource[resource(param)] ?? crypto.randomUUID()));
  const pathWith = (overrides: Record<string, string> = {}) =>
    op.pathParams.reduce((url, p) => url.replace(`{${p}}`, overrides[p] ?? validPath(p)), op.path);
  // Query parameters naming one of our own resources keep naming it (an admin reconcile
  // without creator_id would reconcile every creator of a shared test database).
  const baseQuery = Object.keys(op.query).filter((name) => fx.byField[name]);
  const queryWith = (pieces: string[]) => [
    ...baseQuery.filter((name) => !pieces.some((p) => p.startsWith(name))).map((name) => `${name}=${fx.byField[name]}`),
    ...pieces,
  ];
  // Required fields only: each optional one joins when it is the field made hostile.
  const body = () => (op.body ? validObject(mainBranch(op.body), fx, false) : undefined);
  const jsonHeaders = { ...auth, 'content-type': 'application/json' };

  const requests: HostileRequest[] = [];
  const send = (what: string, parts: { path?: string; query?: string[]; payload?: string | Buffer; headers?: Record<string, string> }) => {
    const query = queryWith(parts.query ?? []);
    const payload = 'payload' in parts ? parts.payload : op.body ? JSON.stringify(body()) : undefined;
    requests.push({
      method: op.method,
      url: `${parts.path ?? pathWith()}${query.length ? `?${query.join('&')}` : ''}`,
      headers: { ...(payload !== undefined ? jsonHeaders : auth), ...parts.headers },
      ...(payload !== undefined ? { payload } : {}),
      what,
    });
  };

  send('the valid request', {});

  for (const param of op.pathParams) {
    for (const segment of PATH_SEGMENTS) send(`path {${param}} = ${segment.slice(0, 40)}`, { path: pathWith({ [param]: segment }) });
  }

  const queryNames = Object.keys(op.query);
  for (const name of queryNames) {
    for (const value of rng.sample(QUERY_VALUES, PER_OP.queryValuesPerParam)) send(`query ${name}=${value.slice(0, 40)}`, { query: [`${name}=${value}`] });
  }
  for (const shape of rng.sample(QUERY_SHAPES, PER_OP.queryShapes)) {
    const q = shape(queryNames.length ? rng.pick(queryNames) : 'page');
    send(`query ${q.slice(0, 60)}`, { query: [q] });
  }

  if (op.body) {
    for (const path of fieldPaths(op.body)) {
      for (const value of rng.sample(JSON_VALUES, PER_OP.valuesPerField)) {
        send(`body ${path.join('.')} = ${JSON.stringify(value)?.slice(0, 40)}`, { payload: JSON.stringify(withField(body(), path, value)) });
      }
    }
    const leaves = fieldPaths(op.body);
    for (const raw of rng.sample(RAW_NUMBERS, PER_OP.rawNumbersPerBody)) {
      const path = leaves.length ? rng.pick(leaves) : ['x'];
      send(`body ${path.join('.')} = ${raw}`, { payload: JSON.stringify(withField(body(), path, '__hostile_raw__')).replace(RAW, raw) });
    }
    send('body with an unknown field', { payload: JSON.stringify({ ...body(), __unknown: 1 }) });
    for (const type of rng.sample(CONTENT_TYPES, PER_OP.contentTypes)) {
      send(`content-type ${type.slice(0, 40)}`, { payload: JSON.stringify(body()), headers: { 'content-type': type } });
    }
    send('a body without content-type', { payload: JSON.stringify(body()), headers: { 'content-type': '' } });
    send('a body over 1 MiB', { payload: JSON.stringify({ ...body(), pad: 'x'.repeat(1024 * 1024) }) });
  }
  // Routes without a body are sent some too: they must refuse it, whatever it is.
  for (const raw of rng.sample(RAW_BODIES, op.body ? PER_OP.rawBodies : 3)) {
    send(`raw body ${JSON.stringify(raw.toString()).slice(0, 40)}`, { payload: raw });
  }

  if (op.method === 'POST') {
    for (const key of rng.sample(IDEMPOTENCY_KEYS, 3)) send(`Idempotency-Key ${key.slice(0, 20)}`, { headers: { 'idempotency-key': key } });
  }
  send('a long X-Request-Id and an XML Accept', { headers: { 'x-request-id': 'r'.repeat(10_000), accept: 'application/xml' } });

  for (let i = 0; i < PER_OP.compound; i++) {
    const path = op.pathParams.length && rng.chance(0.5) ? pathWith({ [rng.pick(op.pathParams)]: rng.pick(PATH_SEGMENTS) }) : undefined;
    const query = [rng.pick(QUERY_SHAPES)(queryNames.length ? rng.pick(queryNames) : 'page'), `${rng.pick(queryNames.length ? queryNames : ['limit'])}=${rng.pick(QUERY_VALUES)}`];
    const leaves = op.body ? fieldPaths(op.body) : [];
    const payload = leaves.length
      ? JSON.stringify(leaves.reduce((b, p) => (rng.chance(0.3) ? withField(b, p, rng.pick(JSON_VALUES)) : b), body() as unknown))
      : rng.chance(0.5)
        ? rng.pick(RAW_BODIES)
        : undefined;
    send(`several parts hostile (#${i})`, { ...(path ? { path } : {}), query, payload });
  }
  return requests;
}
