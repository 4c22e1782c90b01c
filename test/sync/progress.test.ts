import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { readStatus } from '../../src/ops/status.ts';
import type { RunProgress } from '../../src/ops/progress.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';
import { defaultSchedule } from '../support/schedule.ts';

/**
 * A slow backfill shows how far it is and when it ends. The budget is compressed to 5 requests a second: the
 * stream's 172 pages then take about 35 s, and the budget, not the machine, sets the pace, as it does for a real
 * key at 100 a minute.
 */

const budget = { limit: 5, periodMs: 1000 };
let sandbox: RunningSandbox;
let sync: TestSync;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 1, size: 'small', rateLimit: budget });
  sync = await openTestSync(sandbox, { rateLimit: budget });
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

interface Sample {
  at: number;
  progress: RunProgress | undefined;
  company: { fraction: number | null; etaSeconds: number | null } | undefined;
}

describe('progress of a backfill', () => {
  it('status shows a share between 0 and 1 and an ETA close to the time the stream still took', async () => {
    const samples: Sample[] = [];
    let running = true;
    const watch = (async () => {
      while (running) {
        const status = await readStatus(sync.warehouse, { companies: ['acme'], schedule: defaultSchedule });
        const stream = status.streams.find((s) => s.stream === 'assignment-changes' && s.running);
        samples.push({
          at: Date.now(),
          progress: stream?.progress,
          company: status.progress.find((c) => c.company === 'acme'),
        });
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const started = Date.now();
    const summary = await runStreams({ ...sync.ctx, budget }, selectStreams(['assignment-changes']));
    const ended = Date.now();
    running = false;
    await watch;
    expect(summary.streams.map((s) => s.outcome)).toEqual(['ok']);
    expect(summary.streams[0]!.requests).toBeGreaterThan(100);

    const shown = samples.filter((s) => s.progress);
    expect(shown.length).toBeGreaterThan(10);
    for (const s of shown) {
      expect(s.progress!.basis).toBe('windows');
      expect(s.progress!.fraction).toBeGreaterThan(0);
      expect(s.progress!.fraction).toBeLessThan(1);
      expect(s.progress!.etaSeconds).toEqual(expect.any(Number));
      expect(s.company!.fraction).toBeGreaterThan(0);
      expect(s.company!.etaSeconds).toEqual(expect.any(Number));
    }
    // The share grows as the pages are read (a later estimate may take some back when denser slices appear).
    expect(shown.at(-1)!.progress!.fraction).toBeGreaterThan(shown[0]!.progress!.fraction!);

    // Two thirds of the way through, the ETA is within 25% of the time the stream still took. Before the first
    // slices holding records are read (the sandbox's history begins 90 days back; the backfill reaches 400), the
    // empty slices before them say nothing of what follows, and the estimate is low.
    const at = started + ((ended - started) * 2) / 3;
    const read = shown.reduce((a, b) => (Math.abs(b.at - at) < Math.abs(a.at - at) ? b : a));
    const actual = (ended - read.at) / 1000;
    expect(Math.abs(read.progress!.etaSeconds! - actual)).toBeLessThanOrEqual(actual * 0.25);

    // Once the run ends, no progress is shown.
    const after = await readStatus(sync.warehouse, { companies: ['acme'], schedule: defaultSchedule });
    expect(after.streams.find((s) => s.stream === 'assignment-changes')!.progress).toBeUndefined();
    expect(after.progress).toEqual([]);
  }, 90_000);
});
