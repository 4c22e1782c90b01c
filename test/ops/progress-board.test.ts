import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { Observers } from '../../src/observers.ts';
import { LiveFigures } from '../../src/ops/live.ts';
import type { Console } from '../../src/console.ts';
import { PROGRESS_LOG_MS, ProgressBoard } from '../../src/ops/progress-board.ts';

function consoleOf(live: boolean): Console & { written: string[]; block: string[] } {
  const c = {
    live,
    written: [] as string[],
    block: [] as string[],
    write: (t: string) => void c.written.push(t),
    setLive: (l: string[]) => void (c.block = l),
  };
  return c;
}

function board(live: boolean) {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'info' },
    { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  const observers = new Observers();
  const console = consoleOf(live);
  const b = new ProgressBoard({ console, live: new LiveFigures(), plain: true, log });
  b.listen(observers);
  return { observers, console, lines, b };
}

const progress = {
  company: 'acme',
  stream: 'shift-assignments',
  basis: 'windows' as const,
  fraction: 0.4,
  pagesDone: 40,
  pagesLeft: 60,
  perSecond: 2,
};
const page = { company: 'acme', stream: 'shift-assignments', partition: '-', rows: 200, rejects: 0, deleted: 0 };

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('progress off a terminal', () => {
  it('goes out as a structured log event per stream at most every 30 s, never as text lines', () => {
    const { observers, console, lines } = board(false);
    observers.emit('progress', progress);
    observers.emit('page', page);
    expect(lines).toEqual([]);
    vi.advanceTimersByTime(PROGRESS_LOG_MS);
    observers.emit('page', page);
    observers.emit('page', page);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'stream progress',
      company: 'acme',
      stream: 'shift-assignments',
      pages: 2,
      progress: { basis: 'windows', fraction: 0.4, etaSeconds: 30 },
    });
    expect(console.written).toEqual([]);
  });
});

describe('progress on a terminal', () => {
  it('shows the share and the time left on the stream line, two streams of one key sharing its budget', () => {
    const { observers, console, b } = board(true);
    observers.emit('page', page);
    observers.emit('progress', progress);
    observers.emit('progress', { ...progress, stream: 'time-off-requests', fraction: 0.5, pagesLeft: 20 });
    vi.advanceTimersByTime(300);
    expect(b.lines()[0]).toMatch(/^shift-assignments\s+200 rows\s+1 pages .*40% \(windows\), about 40 s left/);
    expect(b.lines()[1]).toMatch(/^time-off-requests .*50% \(windows\), about 20 s left/);
    expect(console.block[0]).toBe('running (2):');
  });
});
