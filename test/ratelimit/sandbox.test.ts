import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runProcesses, summarise, type WorkerConfig } from './sandbox-worker.ts';

/**
 * The limiter against the sandbox over HTTP: two processes, four workers each, sharing one budget through Redis,
 * with the limit compressed to 100 per two seconds so twelve windows take 24 seconds.
 *
 * The workers use the incremental lane, which is paced: one start every (W + margin) / L, so the sustained rate is
 * L / (W + margin) and the safety margin caps the budget's use (50 ms of 2 s: 97.5%). The margin must absorb how
 * late the sandbox may count a request on a machine loaded by the rest of the suite: 20 and 25 ms saw 429s there.
 */
describe('limiter against the sandbox', () => {
  const rateLimit = { limit: 100, windowMs: 2000 };
  let sandbox: RunningSandbox;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, rateLimit, size: 'tiny' });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('uses at least 95% of the limit across processes without a single 429', async () => {
    const cfg: WorkerConfig = {
      mode: 'limiter',
      url: sandbox.url,
      apiKey: sandbox.apiKey,
      rateLimit,
      // Paced starts need a waiter at each turn: four per process keep one waiting while others wait for answers.
      workers: 4,
      // The start-up window and half a window more than the twelve counted, so the last is not cut off by the stop.
      durationMs: 13.5 * rateLimit.windowMs,
      redisUrl: inject('redisUrl'),
      safetyMarginMs: 50,
    };
    const { startAt, sent } = await runProcesses(cfg, 2);
    // Counted from the second window: a paced limiter does not make up with a burst what the processes' start-up
    // (connecting, compiling on a loaded machine) cost the first.
    const summary = summarise(sent, startAt + rateLimit.windowMs, {
      ...cfg,
      durationMs: cfg.durationMs - rateLimit.windowMs,
    });

    expect(summary.windows).toBeGreaterThanOrEqual(10);
    expect(summary.limited).toBe(0);
    expect(sandbox.stats().rateLimited).toBe(0);
    const perWindow = `per window: ${summary.perWindow.join(' ')}`;
    expect(summary.usedPct, perWindow).toBeGreaterThanOrEqual(95);
    // A window or two can lose starts when the rest of the suite starves these processes of CPU on two cores; the
    // 95% above is the claim, this bounds how unevenly it is spent.
    expect(summary.minWindowPct, perWindow).toBeGreaterThanOrEqual(75);
    expect(sent.every((s) => s.status === 200)).toBe(true);
  });
});
