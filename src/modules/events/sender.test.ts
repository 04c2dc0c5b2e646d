import { describe, expect, it } from 'vitest';
import { startReceiver } from '../../../test/events-kit.js';
import { endpointUrlProblem } from './endpoint-url.js';
import { createSender, retryAfter } from './sender.js';

describe('the sender', () => {
  it('refuses a name that resolves to a private address, checked at send time, not only when the URL was saved', async () => {
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    const strict = createSender({ allowLoopback: false });
    // "localhost" passes no URL rule here on purpose: the resolved address is what is refused.
    const byName = await strict.send(`http://localhost:${port}/hooks`, {}, '{}');
    expect(byName).toMatchObject({ statusCode: null, error: expect.stringMatching(/resolves to .*private address: refused/) });
    const byAddress = await strict.send(`http://127.0.0.1:${port}/hooks`, {}, '{}');
    expect(byAddress).toMatchObject({ statusCode: null, error: expect.stringMatching(/private address: refused/) });
    expect(receiver.received).toHaveLength(0);
    // With the simulator (development and tests) the same receiver is reached.
    const dev = createSender({ allowLoopback: true });
    expect(await dev.send(`http://127.0.0.1:${port}/hooks`, {}, '{"type":"ping"}')).toMatchObject({ statusCode: 200, body: 'ok', error: null });
    strict.close();
    dev.close();
    await receiver.close();
  });

  it('reads Retry-After as seconds or as a date, at most a day', () => {
    const now = Date.parse('2026-11-26T12:00:00Z');
    expect(retryAfter('120', now)).toBe(120);
    expect(retryAfter('Thu, 26 Nov 2026 12:10:00 GMT', now)).toBe(600);
    expect(retryAfter('999999', now)).toBe(86_400);
    expect(retryAfter('soon', now)).toBeNull();
    expect(retryAfter(undefined, now)).toBeNull();
  });

  it('allows loopback endpoint URLs only with the simulator', () => {
    expect(endpointUrlProblem('http://127.0.0.1:4000/hooks', true)).toBeNull();
    expect(endpointUrlProblem('http://127.0.0.1:4000/hooks', false)).toMatch(/https/);
    expect(endpointUrlProblem('https://127.0.0.1:4000/hooks', false)).toMatch(/private/);
    expect(endpointUrlProblem('https://hooks.example.com/tribes', false)).toBeNull();
  });
});
