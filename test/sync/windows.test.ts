import { describe, expect, it } from 'vitest';
import {
  coalesce,
  countIn,
  daysOf,
  forEachLimited,
  halve,
  mergeByCost,
  slice,
  DAY_MS,
  HOUR_MS,
} from '../../src/sync/windows.ts';

const d = (s: string) => new Date(s);

describe('windows', () => {
  it('slices a span into consecutive windows no longer than the slice, covering it exactly', () => {
    const w = slice({ start: d('2026-01-01T00:00:00Z'), end: d('2026-03-01T00:00:00Z') }, 31 * DAY_MS);
    expect(w.map((x) => [x.start.toISOString().slice(0, 10), x.end.toISOString().slice(0, 10)])).toEqual([
      ['2026-01-01', '2026-02-01'],
      ['2026-02-01', '2026-03-01'],
    ]);
    for (const x of w) expect(x.end.getTime() - x.start.getTime()).toBeLessThanOrEqual(31 * DAY_MS);
  });

  it('halves a refused window into two that meet', () => {
    const [a, b] = halve({ start: d('2026-01-01T00:00:00Z'), end: d('2026-01-03T00:00:00Z') });
    expect(a.end).toEqual(b.start);
    expect(a.end.toISOString()).toBe('2026-01-02T00:00:00.000Z');
  });

  it('turns change instants into whole UTC days and merges days that touch', () => {
    const days = daysOf([
      d('2026-01-05T10:00:00Z'),
      d('2026-01-05T23:00:00Z'),
      d('2026-01-06T01:00:00+00:00'),
      d('2026-01-09T12:00:00Z'),
    ]);
    expect(days).toHaveLength(3);
    const merged = coalesce(days);
    expect(merged.map((w) => [w.start.toISOString(), w.end.toISOString()])).toEqual([
      ['2026-01-05T00:00:00.000Z', '2026-01-07T00:00:00.000Z'],
      ['2026-01-09T00:00:00.000Z', '2026-01-10T00:00:00.000Z'],
    ]);
  });

  it('counts the instants a window holds, both ends included', () => {
    const at = [1, 5, 5, 9, 12].map((h) => h * HOUR_MS);
    const w = (a: number, b: number) => ({ start: new Date(a * HOUR_MS), end: new Date(b * HOUR_MS) });
    expect(countIn(at, w(5, 9))).toBe(3);
    expect(countIn(at, w(0, 100))).toBe(5);
    expect(countIn(at, w(6, 8))).toBe(0);
  });

  it('merges windows into one paged read only where the records between them fill no more pages than the reads it saves', () => {
    // 10 records an hour from hour 0 to hour 99, and 500 more in hour 50.
    const at = [
      ...Array.from({ length: 1000 }, (_, i) => i * 0.1 * HOUR_MS),
      ...Array.from({ length: 500 }, () => 50.5 * HOUR_MS),
    ].sort((a, b) => a - b);
    const minute = (h: number) => ({ start: new Date(h * HOUR_MS), end: new Date(h * HOUR_MS + 60_000) });
    const count = (w: { start: Date; end: Date }) => countIn(at, w);
    // Hours 1, 3 and 10 hold 101 records between them (one page): one read. Hour 90 is 800 records further: its own read.
    const near = mergeByCost([minute(3), minute(1), minute(10), minute(90)], count, 200);
    expect(near.map((w) => [w.start.getTime() / HOUR_MS, Math.round(w.end.getTime() / 60_000)])).toEqual([
      [1, 10 * 60 + 1],
      [90, 90 * 60 + 1],
    ]);
    // Across hour 50 (500 records more) two reads cost less than one.
    expect(mergeByCost([minute(49), minute(51)], count, 200)).toHaveLength(2);
    // Overlapping windows are always one.
    expect(
      mergeByCost(
        [minute(49), { start: new Date(49 * HOUR_MS + 30_000), end: new Date(49 * HOUR_MS + 90_000) }],
        count,
        200,
      ),
    ).toHaveLength(1);
    for (const w of mergeByCost([minute(3), minute(1), minute(10), minute(90)], count, 200))
      expect(w.end > w.start).toBe(true);
  });

  it('runs at most the given number at once and reports the first failure', async () => {
    let active = 0;
    let peak = 0;
    await forEachLimited([1, 2, 3, 4, 5, 6], 2, async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 5));
      active--;
    });
    expect(peak).toBe(2);
    await expect(
      forEachLimited([1, 2, 3], 2, async (n) => {
        if (n === 2) throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
  });
});
