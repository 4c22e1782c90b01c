import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { stderrConsole, type Console } from './console.ts';

/** Paths that may hold secrets or personal data; pino replaces their values wherever they appear. */
export const redactPaths = [
  'apiKey',
  'api_key',
  '*.api_key',
  '*.apiKey',
  'headers["authorization-token"]',
  '*.headers["authorization-token"]',
  'SSN',
  '*.SSN',
  '*.*.SSN',
  'ssn',
  '*.ssn',
  'token',
  '*.token',
  'password',
  '*.password',
];

export type LogFormat = 'json' | 'pretty';

/** JSON lines unless a person reads them: `LOG_FORMAT` decides, else whether stderr is a terminal. */
export function logFormat(env: NodeJS.ProcessEnv = process.env, isTTY = !!process.stderr.isTTY): LogFormat {
  if (env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty') return env.LOG_FORMAT;
  return isTTY ? 'pretty' : 'json';
}

/** Log lines go to stderr, through the console so they never cut through the progress lines. */
function destination(format: LogFormat, out: Console): DestinationStream {
  if (format === 'json') return { write: (line: string) => out.write(line) };
  const pretty = prettyFactory({
    colorize: out.live,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    singleLine: true,
    errorLikeObjectKeys: ['err', 'error'],
  });
  return { write: (line: string) => out.write(pretty(line)) };
}

export function createLogger(
  level = process.env.LOG_LEVEL ?? 'info',
  format: LogFormat = logFormat(),
  out: Console = stderrConsole,
): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: redactPaths, censor: '[redacted]' },
    },
    destination(format, out),
  );
}

/** The process-wide logger; children carry jobId, stream and company. */
export const log: Logger = createLogger();

export type { Logger };
