import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createCommunity, createCreator, json, type TestApp, type TestCreator } from './helpers.js';

let t: TestApp;
let creator: TestCreator;
beforeAll(async () => {
  t = await buildTestApp({
    // A route that fails like a bug would, to prove 500s carry no internals.
    beforeReady: (app) =>
      app.get('/api/v1/__explode', async () => {
        throw new Error('secret internal detail: relation "creators" password=hunter2');
      }),
  });
  creator = await createCreator(t);
});
afterAll(() => t.close());

const post = (payload: string, contentType = 'application/json') =>
  t.app.inject({ method: 'POST', url: '/api/v1/communities', headers: { ...creator.headers, 'content-type': contentType }, payload });

describe('HTTP conventions', () => {
  it('answers malformed JSON with 400 invalid_json in the error envelope', async () => {
    const res = await post('{"name": "x",');
    expect(res.statusCode).toBe(400);
    expect(json(res)).toEqual({ success: false, error: { code: 'invalid_json', message: expect.any(String) } });
  });

  it('answers a body over 1 MiB with 413', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), slug: 'abc', category: 'yoga' }));
    expect(res.statusCode).toBe(413);
    expect(json(res).error.code).toBe('payload_too_large');
  });

  it('answers a non-JSON body with 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await post('name=x', type);
      expect(res.statusCode, type).toBe(415);
      expect(json(res).error.code).toBe('unsupported_media_type');
    }
  });

  it('rejects unknown body fields and wrong types, naming every field in details', async () => {
    const res = await post(JSON.stringify({ name: 42, slug: 'ok-slug', category: 'yoga', is_public: 'yes', colour: 'red' }));
    expect(res.statusCode).toBe(400);
    const body = json(res);
    expect(body.error.code).toBe('validation_error');
    const fields = body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'is_public', 'colour']));
    expect(body.error.details).toContainEqual({ field: 'colour', message: 'is not a known field' });
  });

  it('does not coerce JSON types: a numeric string is not a boolean or a number', async () => {
    const res = await post(JSON.stringify({ name: 'x', slug: 'ok-slug-2', category: 'yoga', is_public: 'true' }));
    expect(res.statusCode).toBe(400);
    expect(json(res).error.details).toContainEqual(expect.objectContaining({ field: 'is_public' }));
  });

  it('answers a malformed UUID in the path with 400', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/communities/not-a-uuid', headers: creator.headers });
    expect(res.statusCode).toBe(400);
    expect(json(res).error).toMatchObject({ code: 'validation_error', details: [{ field: 'id', message: 'must be a UUID' }] });
  });

  it('refuses a body on an endpoint that takes none', async () => {
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/api/v1/communities/0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b',
      headers: creator.headers,
      payload: { force: true },
    });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.details).toEqual([{ field: 'force', message: 'is not a known field' }]);
  });

  it('puts X-Request-Id on every response, keeping a well-formed one from the caller', async () => {
    const generated = await t.app.inject({ method: 'GET', url: '/health' });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-abc.123' } });
    expect(kept.headers['x-request-id']).toBe('trace-abc.123');
    const replaced = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id\nwith newline' } });
    expect(replaced.headers['x-request-id']).not.toContain('bad');
    for (const res of [await post('{'), await t.app.inject({ method: 'GET', url: '/nope' }), await t.app.inject({ method: 'GET', url: '/api/v1/communities' })]) {
      expect(res.headers['x-request-id']).toBeTruthy();
    }
  });

  it('sends a long answer whole, its Content-Length counting bytes (accents and emoji take several)', async () => {
    const own = await createCreator(t);
    const description = 'Treino de força 💪 com calma, técnica e constância. '.repeat(30);
    for (let i = 0; i < 4; i++) await createCommunity(t, own, { name: `Força ${i} 🏋️`, description });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/communities?limit=10', headers: own.headers });
    expect(res.statusCode).toBe(200);
    // Past the size sent as bytes (app.ts), with characters the UTF-16 length undercounts.
    expect(res.body.length).toBeGreaterThan(4_096);
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    expect(json(res).data.map((c: { description: string }) => c.description)).toEqual(Array(4).fill(description));
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('answers an unknown route with 404 in the error envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(json(res)).toMatchObject({ success: false, error: { code: 'not_found' } });
  });

  it('answers a POST with a JSON body to an unknown path with 404 naming the path, not a complaint about the body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/nothing-here?x=1', payload: { name: 'x' } });
    expect(res.statusCode).toBe(404);
    expect(json(res).error).toMatchObject({ code: 'not_found', message: 'No route POST /api/v1/nothing-here.' });
    const nul = await t.app.inject({ method: 'POST', url: '/api/v1/nothing-here', payload: { name: 'a\u0000b' } });
    expect(nul.statusCode).toBe(404);
  });

  it('answers an unexpected failure with 500 that reveals nothing internal', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/__explode', headers: { 'x-request-id': 'req-500' } });
    expect(res.statusCode).toBe(500);
    const body = json(res);
    expect(body.error.code).toBe('internal_error');
    expect(body.error.message).toContain('req-500');
    expect(res.body).not.toMatch(/secret|hunter2|relation|stack|Error:/);
  });

  it('wraps successes as {success: true, data}', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: creator.headers });
    expect(json(res)).toEqual({ success: true, data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } });
  });
});
