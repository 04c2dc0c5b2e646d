import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { chooseLogFormat, createLogger } from './logging.js';

function capture() {
  const chunks: string[] = [];
  return { chunks, destination: { write: (text: string) => void chunks.push(text) } };
}

describe('the log format', () => {
  it('is pretty on a terminal and JSON anywhere else, unless LOG_FORMAT says which', () => {
    expect(chooseLogFormat(loadConfig({}).logFormat, true)).toBe('pretty');
    expect(chooseLogFormat(loadConfig({}).logFormat, false)).toBe('json');
    expect(chooseLogFormat(loadConfig({ LOG_FORMAT: 'json' }).logFormat, true)).toBe('json');
    expect(chooseLogFormat(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, false)).toBe('pretty');
    expect(chooseLogFormat(loadConfig({ LOG_FORMAT: ' Pretty ' }).logFormat, false)).toBe('pretty');
  });

  it('refuses any other LOG_FORMAT, naming the values it takes', () => {
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(/LOG_FORMAT must be "json" .* or "pretty" .*got "text".*unset/);
  });
});

describe('the logger', () => {
  it('writes pretty lines at once, in this thread, with secrets redacted', () => {
    const { chunks, destination } = capture();
    const logger = createLogger({ level: 'info', format: 'pretty', destination });
    logger.info({ password: 'hunter2', file: '/data/admin-token' }, 'admin token generated');
    logger.child({ component: 'processor-sim' }).info('processor simulator listening');
    logger.debug('below the level');
    // No await: a synchronous writer has already written both lines.
    expect(chunks).toHaveLength(2);
    const [first, second] = chunks as [string, string];
    expect(first).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: admin token generated\n/);
    expect(first).toContain('file: "/data/admin-token"');
    expect(first).toContain('password: "[Redacted]"');
    expect(first).not.toContain('hunter2');
    expect(first).not.toMatch(/pid|hostname/);
    expect(first).not.toContain('\u001b['); // no colours unless writing to a terminal
    expect(second).toMatch(/INFO: \[processor-sim\] processor simulator listening\n$/);
  });

  it('writes one JSON object per line in JSON mode, with secrets redacted', () => {
    const { chunks, destination } = capture();
    createLogger({ level: 'info', format: 'json', destination }).info({ token: 'tribes_mt_secret' }, 'hello');
    const line = JSON.parse(chunks.join(''));
    expect(line).toMatchObject({ level: 30, msg: 'hello', token: '[Redacted]' });
  });
});
