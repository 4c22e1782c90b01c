import { pino, type Logger } from 'pino';

/** Paths that may hold secrets or personal data; pino replaces their values wherever they appear. */
export const redactPaths = [
  'apiKey',
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

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    redact: { paths: redactPaths, censor: '[redacted]' },
  });
}

/** The process-wide logger; children carry jobId, stream and company. */
export const log: Logger = createLogger();

export type { Logger };
