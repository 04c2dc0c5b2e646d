import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARLIEST_MS, LATEST_MS } from '../src/http/dates.js';
import { buildTestApp, createCommunity, createCreator, json, mintMember, type TestApp, type TestCreator } from './helpers.js';

/**
 * Dates in range (issue #26, item 4): every date and date-time a client sends is held to what
 * both databases store and read back exactly, 1900-01-01 to 9999-12-31 in UTC, and answered 400
 * outside it, never 500; inside it, what was sent is what is read back.
 */
const clock = new Date('2026-06-15T12:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const RANGE = 'between 1900-01-01 and 9999-12-31';
const DAY_MS = 86_400_000;

function expectOutOfRange(res: LightMyRequestResponse, field: string) {
  expect(res.statusCode, res.body).toBe(400);
  const body = json(res);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe('validation_error');
  const details = (body.error.details ?? []) as { field: string; message: string }[];
  expect(details.filter((d) => d.field === field).map((d) => d.message).join(' | '), res.body).toContain(RANGE);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** RFC 3339 date-times around and beyond the range, offsets from −14:00 to +14:00, milliseconds at most (JavaScript's precision). */
const dateTimeArb = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 99, 100, 1899, 1900, 1970, 2026, 2027, 9998, 9999)),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    ms: fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined }),
    offset: fc.option(fc.integer({ min: -14 * 4, max: 14 * 4 }).map((q) => q * 15), { nil: undefined }),
  })
  .map(({ year, month, day, hour, minute, second, ms, offset }) => {
    const zone = offset === undefined ? 'Z' : `${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
    return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}${ms === undefined ? '' : `.${pad(ms, 3)}`}${zone}`;
  });
const dateArb = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 99, 100, 1899, 1900, 2026, 9999)),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
  })
  .map(({ year, month, day }) => `${pad(year, 4)}-${pad(month)}-${pad(day)}`);

const inRange = (s: string) => {
  const ms = Date.parse(s.length === 10 ? `${s}T00:00:00Z` : s);
  return ms >= EARLIEST_MS && ms <= LATEST_MS;
};
/** The same instant (the answer writes it in UTC with milliseconds). */
const sameInstant = (sent: string, answered: string) => expect(Date.parse(answered), `${sent} read back as ${answered}`).toBe(Date.parse(sent));

const RUNS = { numRuns: 40 };

async function place() {
  const creator = await createCreator(t);
  const community = await createCommunity(t, creator);
  return { creator, communityId: community.id as string };
}
const challenge = (communityId: string, startsAt: string, durationDays = 7) => ({
  community_id: communityId,
  name: 'Dates',
  metric: 'workouts_count',
  duration_days: durationDays,
  starts_at: startsAt,
});
const as = (creator: TestCreator, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers: creator.headers, ...(payload ? { payload } : {}) });

describe('dates in range', () => {
  it('answers 400 naming the range, not 500, for each date reported out of range', async () => {
    const { creator, communityId } = await place();
    expectOutOfRange(await as(creator, 'POST', '/challenges', challenge(communityId, '0000-01-01T00:00:00Z')), 'starts_at');
    const poll = { question: 'When?', options: ['Now', 'Later'], closes_at: '9999-12-31T23:00:00-12:00' };
    expectOutOfRange(await as(creator, 'POST', '/posts', { community_id: communityId, content: 'A poll far ahead', poll }), 'poll.closes_at');
    expectOutOfRange(await as(creator, 'GET', '/creator-metrics/history?to=0000-12-31'), 'to');
    const member = await mintMember(t);
    const log = { performed_at: '0000-06-01T10:00:00Z', sets: [{ exercise_id: '33b0a54f-7196-43fb-90b5-067f42ea28b6', reps: 5, load_kg: 60 }] };
    expectOutOfRange(await t.app.inject({ method: 'POST', url: '/api/v1/member/workout-logs', headers: member.headers, payload: log }), 'performed_at');
  });

  it('refuses a year the embedded database would read back a century later, and takes the first and last instants of the range', async () => {
    const { creator, communityId } = await place();
    for (const early of ['0001-03-01T00:00:00Z', '0099-12-31T12:00:00Z', '1899-12-31T23:59:59.999Z', '1900-01-01T00:30:00+01:00']) {
      expectOutOfRange(await as(creator, 'POST', '/challenges', challenge(communityId, early)), 'starts_at');
    }
    const first = await as(creator, 'POST', '/challenges', challenge(communityId, '1900-01-01T00:00:00Z'));
    expect(first.statusCode, first.body).toBe(201);
    expect(json(first).data.starts_at).toBe('1900-01-01T00:00:00.000Z');
    const poll = { question: 'When?', options: ['Now', 'Later'], closes_at: '9999-12-31T23:59:59.999Z' };
    const last = await as(creator, 'POST', '/posts', { community_id: communityId, content: 'A poll open to the end', poll });
    expect(last.statusCode, last.body).toBe(201);
    expect(json(last).data.poll.closes_at).toBe('9999-12-31T23:59:59.999Z');
  });

  it('refuses a challenge that would end after 9999-12-31 with 400 naming starts_at', async () => {
    const { creator, communityId } = await place();
    const res = await as(creator, 'POST', '/challenges', challenge(communityId, '9999-12-30T00:00:00Z', 7));
    expect(res.statusCode, res.body).toBe(400);
    expect(json(res).error.details).toEqual([{ field: 'starts_at', message: expect.stringContaining('must end by 9999-12-31') }]);
  });

  it('states the bound in the document for every date and date-time a client sends, and this file tries each of them', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const found: string[] = [];
    const walk = (schema: any, at: string, op: string, description?: string) => {
      if (!schema || typeof schema !== 'object') return;
      if (schema.$ref) return walk(doc.components.schemas[String(schema.$ref).split('/').pop()!], at, op);
      if (schema.format === 'date' || schema.format === 'date-time') {
        found.push(`${op} ${at}`);
        expect(schema['x-format-minimum'], `${op} ${at}`).toMatch(/^1900-01-01/);
        expect(schema['x-format-maximum'], `${op} ${at}`).toMatch(/^9999-12-31/);
        expect(schema.description ?? description, `${op} ${at}`).toContain('1900-01-01');
      }
      for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v, at ? `${at}.${k}` : k, op);
      for (const key of ['anyOf', 'oneOf', 'allOf']) for (const v of schema[key] ?? []) walk(v, at, op);
      if (schema.items) walk(schema.items, `${at}.0`, op);
    };
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        for (const p of op.parameters ?? []) walk(p.schema, p.name, name, p.description);
        for (const media of Object.values(op.requestBody?.content ?? {}) as { schema: unknown }[]) walk(media.schema, '', name);
      }
    }
    expect(found.sort()).toEqual(
      [
        'GET /api/v1/creator-metrics/history from',
        'GET /api/v1/creator-metrics/history to',
        'PATCH /api/v1/challenges/{id} starts_at',
        'PATCH /api/v1/posts/{id} poll.closes_at',
        'POST /api/v1/challenges starts_at',
        'POST /api/v1/member/workout-logs performed_at',
        'POST /api/v1/posts poll.closes_at',
        'POST /api/v1/webhook-endpoints/{id}/recover since',
      ].sort(),
    );
  });
});

describe('dates in range, over random dates on every route that takes one', () => {
  /** A random date-time sent as `field`: no 500; outside the range a 400 naming it; a 2xx reads it back unchanged. */
  async function check(s: string, field: string, res: LightMyRequestResponse, echoed?: (data: any) => string) {
    expect(res.statusCode, `${s}: ${res.body}`).not.toBe(500);
    if (!inRange(s)) return expectOutOfRange(res, field);
    if (res.statusCode < 300 && echoed) sameInstant(s, echoed(json(res).data));
  }

  it('creating and rescheduling a challenge', async () => {
    const { creator, communityId } = await place();
    const later = await as(creator, 'POST', '/challenges', challenge(communityId, '2027-01-01T00:00:00Z'));
    await fc.assert(
      fc.asyncProperty(dateTimeArb, async (s) => {
        const created = await as(creator, 'POST', '/challenges', challenge(communityId, s));
        await check(s, 'starts_at', created, (d) => d.starts_at);
        if (inRange(s) && Date.parse(s) + 7 * DAY_MS <= LATEST_MS) expect(created.statusCode, created.body).toBe(201);
        await check(s, 'starts_at', await as(creator, 'PATCH', `/challenges/${json(later).data.id}`, { starts_at: s }), (d) => d.starts_at);
      }),
      RUNS,
    );
  });

  it('recovering an endpoint’s dead deliveries since a time', async () => {
    const { creator } = await place();
    const endpoint = await as(creator, 'POST', '/webhook-endpoints', { url: 'https://hooks.example.com/tribes' });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    await fc.assert(
      fc.asyncProperty(dateTimeArb, async (s) => {
        await check(s, 'since', await as(creator, 'POST', `/webhook-endpoints/${json(endpoint).data.id}/recover`, { since: s }), (d) => d.since);
      }),
      RUNS,
    );
  });

  it('a poll’s closing time, on a new post and an edited one', async () => {
    const { creator, communityId } = await place();
    const post = await as(creator, 'POST', '/posts', { community_id: communityId, content: 'A poll' });
    await fc.assert(
      fc.asyncProperty(dateTimeArb, async (s) => {
        const poll = { question: 'When?', options: ['Now', 'Later'], closes_at: s };
        const created = await as(creator, 'POST', '/posts', { community_id: communityId, content: 'A poll', poll });
        await check(s, 'poll.closes_at', created, (d) => d.poll.closes_at);
        if (inRange(s) && Date.parse(s) > clock.getTime()) expect(created.statusCode, created.body).toBe(201);
        await check(s, 'poll.closes_at', await as(creator, 'PATCH', `/posts/${json(post).data.id}`, { poll }), (d) => d.poll.closes_at);
      }),
      RUNS,
    );
  });

  it('a workout’s time', async () => {
    const member = await mintMember(t);
    await fc.assert(
      fc.asyncProperty(dateTimeArb, async (s) => {
        const log = { performed_at: s, sets: [{ exercise_id: '33b0a54f-7196-43fb-90b5-067f42ea28b6', reps: 5, load_kg: 60 }] };
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/member/workout-logs', headers: member.headers, payload: log });
        await check(s, 'performed_at', res, (d) => d.performed_at);
        if (inRange(s) && Date.parse(s) <= clock.getTime()) expect(res.statusCode, res.body).toBe(201);
      }),
      RUNS,
    );
  });

  it('the metrics history’s range, and the member list’s and export’s joined_after', async () => {
    const { creator } = await place();
    await fc.assert(
      fc.asyncProperty(dateArb, dateArb, dateTimeArb, async (from, to, joined) => {
        const res = await as(creator, 'GET', `/creator-metrics/history?from=${from}&to=${to}`);
        expect(res.statusCode, res.body).not.toBe(500);
        if (!inRange(from)) expectOutOfRange(res, 'from');
        if (!inRange(to)) expectOutOfRange(res, 'to');
        if (res.statusCode === 200) expect([json(res).data.from, json(res).data.to]).toEqual([from, to]);
        for (const q of [joined, joined.slice(0, 10)]) {
          for (const url of ['/members', '/members/export.csv']) {
            const listed = await as(creator, 'GET', `${url}?joined_after=${encodeURIComponent(q)}`);
            expect(listed.statusCode, `${url} ${q}: ${listed.body}`).toBe(inRange(q) ? 200 : 400);
          }
        }
      }),
      RUNS,
    );
  });
});
