import { describe, expect, it } from 'vitest';
import { coalesce, daysOf, forEachLimited, halve, slice, DAY_MS } from '../../src/sync/windows.ts';

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
    const days = daysOf([d('2026-01-05T10:00:00Z'), d('2026-01-05T23:00:00Z'), d('2026-01-06T01:00:00+00:00'), d('2026-01-09T12:00:00Z')]);
    expect(days).toHaveLength(3);
    const merged = coalesce(days);
    expect(merged.map((w) => [w.start.toISOString(), w.end.toISOString()])).toEqual([
      ['2026-01-05T00:00:00.000Z', '2026-01-07T00:00:00.000Z'],
      ['2026-01-09T00:00:00.000Z', '2026-01-10T00:00:00.000Z'],
    ]);
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
