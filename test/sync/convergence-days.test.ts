import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox, type SandboxSize } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { streams } from '../../src/sync/streams.ts';
import { divergence, dueForComparison, summarizeDivergence } from '../support/convergence.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * Thirty simulated days in steps: after each step's changes, one incremental sync (and the second read that
 * confirms snapshot deletions), then every table is compared with the service's truth row for row, by content.
 * A table whose staleness bound is longer than a step (a weekly complete re-read) is compared on the steps where
 * that re-read ran.
 */

const runs: { sandbox: RunningSandbox; sync: TestSync }[] = [];

afterAll(async () => {
  for (const r of runs) {
    await r.sync.close();
    await r.sandbox.close();
  }
});

async function converge(size: SandboxSize, steps: number, stepHours: number): Promise<void> {
  const sandbox = await startSandbox({ port: 0, seed: 13, size, rateLimit: { limit: 100, windowMs: 1000 } });
  const sync = await openTestSync(sandbox);
  runs.push({ sandbox, sync });
  const first = await runStreams(sync.ctx, selectStreams());
  expect(first.failed).toBe(0);
  expect(summarizeDivergence(await divergence(sync.warehouse, sandbox.data, 'acme'))).toEqual({});
  let compared = 0;
  for (let step = 0; step < steps; step++) {
    sandbox.data.advance(stepHours);
    const cycle = await runStreams(sync.ctx, selectStreams());
    expect(cycle.streams.filter((s) => s.outcome !== 'ok')).toEqual([]);
    await runStreams(sync.ctx, selectStreams(['pending-certifications', 'required-certification-status']));
    const due = dueForComparison(stepHours, cycle.streams);
    const d = await divergence(sync.warehouse, sandbox.data, 'acme');
    const bad = summarizeDivergence(Object.fromEntries(Object.entries(d).filter(([name]) => due.has(name))));
    expect({ step, bad }).toEqual({ step, bad: {} });
    compared += due.size;
  }
  // Every stream was compared at least once after its bound.
  expect(compared).toBeGreaterThanOrEqual(streams.length);
}

describe('thirty days of changes converge within each table’s bound', () => {
  it('small: five steps of six days', { timeout: 600_000 }, async () => {
    await converge('small', 5, 144);
  });
});
