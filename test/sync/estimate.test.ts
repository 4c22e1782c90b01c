import { describe, expect, it } from 'vitest';
import { StreamProgress, sharedEtas } from '../../src/sync/estimate.ts';

/** Reads `pages` pages of `records` records each into one slice of a partition's pass, and settles it. */
function readSlice(
  p: StreamProgress,
  partition: string,
  start: string,
  pages: number,
  records: number,
  settle = true,
): void {
  const slice = p.counter(partition).slice(start);
  for (let i = 0; i < pages; i++) slice.page(records);
  if (settle) slice.settle();
}

describe('a pass estimate', () => {
  it('weighs slices not read by the pages of those read from the first that held records', () => {
    const p = new StreamProgress(['-']);
    p.counter('-').plan(10, 0);
    for (let d = 1; d <= 4; d++) readSlice(p, '-', `2024-01-0${d}T00:00:00.000Z`, 1, 0);
    readSlice(p, '-', '2024-01-05T00:00:00.000Z', 3, 200);
    readSlice(p, '-', '2024-01-06T00:00:00.000Z', 5, 200);
    // Expected per slice: (3 + 5) / 2 = 4; done 4 + 8 = 12 pages; 4 slices left: 16 pages.
    expect(p.estimate()).toEqual({ basis: 'windows', fraction: 12 / 28, pagesDone: 12, pagesLeft: 16 });
  });

  it('counts a slice under way as at least one page more than it took, and slices done by an earlier run as expected', () => {
    const p = new StreamProgress(['-']);
    p.counter('-').plan(4, 2);
    readSlice(p, '-', '2024-01-03T00:00:00.000Z', 2, 200);
    readSlice(p, '-', '2024-01-04T00:00:00.000Z', 3, 200, false);
    // Expected 2; done 2 earlier slices (4) + 2 + 3; the open slice takes at least 4.
    const e = p.estimate();
    expect(e.pagesLeft).toBe(1);
    expect(e.fraction).toBeCloseTo(9 / 10);
    expect(e.basis).toBe('windows');
  });

  it('counts partitions done over planned where no pass is under way, and says so where nothing tells', () => {
    const p = new StreamProgress(['form-1', 'form-2', 'form-3', 'form-4']);
    for (let i = 0; i < 6; i++) p.counter('form-1').page(200);
    p.finish('form-1');
    expect(p.estimate()).toEqual({ basis: 'partitions', fraction: 0.25, pagesDone: 6, pagesLeft: 18 });
    const whole = new StreamProgress(['-']);
    whole.counter('-').page(200);
    expect(whole.estimate()).toEqual({ basis: 'unknown', fraction: null, pagesDone: 1, pagesLeft: null });
  });
});

describe('ETAs under one budget', () => {
  it('share the budget among the streams under way until each ends', () => {
    // 10 a second: both read 10 pages at 5 a second (2 s), then the second reads its last 20 alone (2 s more).
    expect(sharedEtas([10, 30], 10)).toEqual([2, 4]);
    // A stream with nothing left takes no share.
    expect(sharedEtas([30, 10, 0], 10)).toEqual([4, 2, 0]);
    expect(sharedEtas([50], 5)).toEqual([10]);
  });
});
