import { destination as sonicDestination, pino, type DestinationStream, type Logger } from 'pino';
import { LOG_REDACT, LOG_SERIALIZERS } from './app.js';
import type { LogFormat } from './config.js';

/**
 * LOG_FORMAT wins when set; otherwise a person at a terminal gets readable lines and anything
 * else (a pipe, a file, a log collector, the test runner) one JSON object per line.
 */
export function chooseLogFormat(setting: LogFormat | undefined, stdoutIsTTY: boolean): LogFormat {
  return setting ?? (stdoutIsTTY ? 'pretty' : 'json');
}

export interface LoggerOptions {
  level: string;
  format: LogFormat;
  /** Where lines go; stdout by default. */
  destination?: DestinationStream;
  /** Colours in pretty mode; on only when writing to a terminal. */
  colorize?: boolean;
}

/**
 * The process's logger. Pretty mode formats each line in this thread and writes it
 * synchronously: pino-pretty as a transport would run in a worker thread (~30 MB of memory at
 * idle), and an asynchronous writer could lose the last lines before a crash exits.
 * Redaction runs before formatting, so both formats hide the same secrets. pino-pretty is
 * loaded only for pretty mode (~2 MB a production process does not need).
 */
export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const settings = { level: options.level, redact: LOG_REDACT, serializers: LOG_SERIALIZERS };
  if (options.format === 'json') return options.destination ? pino(settings, options.destination) : pino(settings);
  const destination = options.destination ?? sonicDestination({ dest: 1, sync: true });
  const { prettyFactory } = await import('pino-pretty');
  const prettify = prettyFactory({
    colorize: options.colorize ?? false,
    translateTime: 'SYS:HH:MM:ss.l',
    // The simulator's lines (component: processor-sim) say so up front rather than on a line of their own.
    messageFormat: '{if component}[{component}] {end}{msg}',
    ignore: 'pid,hostname,component',
    // One line per entry (a request is two lines, not ten); an error's stack still gets its own lines.
    singleLine: true,
  });
  return pino(settings, { write: (line: string) => destination.write(prettify(line)) });
}

/**
 * The logger start-up work logs through. On a terminal at the default level the routine lines
 * (migrations applied, where a token was generated, the simulator listening) are what the
 * banner says anyway, so they are held back and the banner comes first; warnings and errors
 * still show, and LOG_LEVEL=debug (or JSON) shows everything.
 */
export function startupLogger(logger: Logger, format: LogFormat): Logger {
  return format === 'pretty' && logger.level === 'info' ? logger.child({}, { level: 'warn' }) : logger;
}
