import { Writable } from 'node:stream';
import { pino } from 'pino';

/** A pino logger whose JSON lines are kept as written. */
export function capturingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, log: pino({ level: 'info' }, sink) };
}
