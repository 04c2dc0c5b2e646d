import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { lazyRequestLogger } from './request-logger.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level, redact: ['password'] }, stream), lines };
}

describe("a request's logger", () => {
  it('makes no pino child while nothing is logged at a level that is on', () => {
    const { logger, lines } = capture('warn');
    const child = vi.spyOn(logger, 'child');
    const log = lazyRequestLogger(logger, { reqId: 'r-1' }, {});
    log.info('incoming request');
    log.debug('details');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('logs with the request id, redaction and the level of its parent once something is on', async () => {
    const { logger, lines } = capture('info');
    const log = lazyRequestLogger(logger, { reqId: 'r-2' }, {});
    log.info({ password: 'hunter2' }, 'incoming request');
    log.warn('slow');
    log.debug('not at info');
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => [l.reqId, l.msg, l.password])).toEqual([
      ['r-2', 'incoming request', '[Redacted]'],
      ['r-2', 'slow', undefined],
    ]);
    expect(log.level).toBe('info');
    expect((log.child({ step: 'x' }) as unknown as ReturnType<typeof pino>).bindings()).toMatchObject({ reqId: 'r-2', step: 'x' });
  });
});
