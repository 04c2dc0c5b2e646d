import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { chooseLogFormat, createLogger, startupLogger } from './logging.js';

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
  it('writes pretty lines at once, in this thread, one per entry, with secrets redacted', async () => {
    const { chunks, destination } = capture();
    const logger = await createLogger({ level: 'info', format: 'pretty', destination });
    logger.info({ password: 'hunter2', file: '/data/admin-token' }, 'admin token generated');
    logger.child({ component: 'processor-sim' }).info('processor simulator listening');
    logger.debug('below the level');
    // Nothing awaited since logging: a synchronous writer has already written both lines.
    expect(chunks).toEqual([
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: admin token generated \{"password":"\[Redacted\]","file":"\/data\/admin-token"\}\n$/),
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[processor-sim\] processor simulator listening\n$/),
    ]);
    expect(chunks.join('')).not.toContain('hunter2');
    expect(chunks.join('')).not.toContain('\u001b['); // no colours unless writing to a terminal
  });

  it('keeps an error\'s stack on lines of its own in pretty mode', async () => {
    const { chunks, destination } = capture();
    (await createLogger({ level: 'info', format: 'pretty', destination })).error({ err: new Error('boom') }, 'unhandled error');
    expect(chunks.join('')).toMatch(/ERROR: unhandled error ?\n\s+err: \{[\s\S]*"message": "boom"[\s\S]*\n\s+Error: boom\n\s+at /);
  });

  it('writes one JSON object per line in JSON mode, with secrets redacted', async () => {
    const { chunks, destination } = capture();
    (await createLogger({ level: 'info', format: 'json', destination })).info({ token: 'tribes_mt_secret' }, 'hello');
    const line = JSON.parse(chunks.join(''));
    expect(line).toMatchObject({ level: 30, msg: 'hello', token: '[Redacted]' });
  });
});

describe('the start-up lines before the banner', () => {
  it('are held back on a terminal at the default level, but not warnings, not at debug and never in JSON', async () => {
    const lines = capture();
    const seen = async (format: 'json' | 'pretty', level: string) => {
      lines.chunks.length = 0;
      const logger = await createLogger({ level, format, destination: lines.destination });
      const quiet = startupLogger(logger, format);
      quiet.child({ component: 'processor-sim' }).info('processor simulator listening');
      quiet.warn('admin token file is world-readable');
      return lines.chunks.join('');
    };
    const pretty = await seen('pretty', 'info');
    expect(pretty).not.toContain('listening');
    expect(pretty).toContain('world-readable');
    expect(await seen('pretty', 'debug')).toContain('listening');
    expect(await seen('json', 'info')).toContain('listening');
  });
});
