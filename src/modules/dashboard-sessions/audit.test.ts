import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_REDACT, LOG_SERIALIZERS } from '../../app.js';
import { buildTestApp, createCreator, json, type TestApp } from '../../../test/helpers.js';

/** Every "request completed" line this app writes, as JSON. */
const lines: Array<Record<string, any>> = [];
let t: TestApp;
beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  t = await buildTestApp({ logger: pino({ level: 'info', redact: LOG_REDACT, serializers: LOG_SERIALIZERS }, stream) });
});
afterAll(() => t.close());

const completed = (reqId: string) => lines.find((l) => l.reqId === reqId && l.msg === 'request completed');

describe('the audit trail of requests', () => {
  it("names the creator and the credential on each request's completed line: the API key, or the dashboard session acting for it", async () => {
    const creator = await createCreator(t);
    const byKey = await t.app.inject({ method: 'GET', url: '/api/v1/communities', headers: creator.headers });
    expect(completed(byKey.headers['x-request-id'] as string)?.res).toEqual({ statusCode: 200, creatorId: creator.id, credential: `api_key:${creator.apiKeyId}` });

    const link = json(await t.app.inject({ method: 'POST', url: '/api/v1/dashboard/login-links', headers: creator.headers })).data.url as string;
    const signIn = await t.app.inject({ method: 'GET', url: link.slice(link.indexOf('/dashboard/sign-in')) });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const bySession = await t.app.inject({ method: 'GET', url: '/api/v1/creator-metrics', headers: { cookie } });
    expect(bySession.statusCode).toBe(200);
    const session = json(await t.app.inject({ method: 'GET', url: '/api/v1/dashboard/sessions', headers: creator.headers })).data[0];
    expect(completed(bySession.headers['x-request-id'] as string)?.res).toEqual({ statusCode: 200, creatorId: creator.id, credential: `session:${session.id}` });
    // The sign-in itself is anonymous, and its token stays out of the line.
    const signInLine = completed(signIn.headers['x-request-id'] as string)!;
    expect(signInLine.res).toEqual({ statusCode: 303 });
    expect(JSON.stringify(lines)).not.toContain(new URL(link).searchParams.get('token')!);
  });
});
