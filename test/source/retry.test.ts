import { describe, expect, it } from 'vitest';
import { backoffMs, sleep, untilReset } from '../../src/source/retry.ts';

describe('backoff', () => {
  const opts = (r: number) => ({ baseMs: 100, capMs: 1000, random: () => r });

  it('doubles its ceiling per attempt up to the cap, with full jitter below it', () => {
    expect([0, 1, 2, 3, 4, 5].map((a) => backoffMs(a, opts(0.999999)))).toEqual([99, 199, 399, 799, 999, 999]);
    expect([0, 3, 9].map((a) => backoffMs(a, opts(0)))).toEqual([0, 0, 0]);
    expect(backoffMs(2, opts(0.5))).toBe(200);
  });
});

describe('sleep', () => {
  it('rejects with the signal’s reason when aborted', async () => {
    const ctl = new AbortController();
    const p = sleep(60_000, ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    await expect(sleep(10, ctl.signal)).rejects.toThrow('stop');
  });
});

describe('untilReset', () => {
  it('is the time left until the reset, never negative', () => {
    expect(untilReset(10_500, 10_000)).toBe(500);
    expect(untilReset(9_000, 10_000)).toBe(0);
    expect(untilReset(undefined, 10_000)).toBe(0);
  });
});
