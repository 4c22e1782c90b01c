import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox, type SandboxSize } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { streams } from '../../src/resources/index.ts';
import { divergence, dueForComparison, spansWithinBound, summarizeDivergence } from '../support/convergence.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * Thirty simulated days in steps: after each step's changes, one incremental sync (and the second read that
 * confirms snapshot deletions), then every table is compared with the service's truth row for row, by content.
 * A table whose staleness bound is longer than a step (a weekly complete re-read) is compared on the steps where
 * that re-read ran, and on the others within the span its daily re-read keeps.
 *
 * `small` runs in the suite. `CONVERGENCE_SIZE=medium` runs the same thirty days at `medium` instead (its backfill
 * alone takes about two minutes on two cores with no rate limit, so it stays out of the suite).
 */

const runs: { sandbox: RunningSandbox; sync: TestSync }[] = [];

afterAll(async () => {
  for (const r of runs) {
    await r.sync.close();
    await r.sandbox.close();
  }
});

const SIZE = (process.env.CONVERGENCE_SIZE ?? 'small') as SandboxSize;
/** `small` keeps the compressed limit of the tests; a larger size runs unlimited, to fit its backfill in minutes. */
const unlimited = SIZE !== 'small';

async function converge(size: SandboxSize, steps: number, stepHours: number): Promise<void> {
  const sandbox = await startSandbox({
    port: 0,
    seed: 13,
    size,
    rateLimit: unlimited ? null : { limit: 100, periodMs: 1000 },
  });
  const sync = await openTestSync(sandbox, unlimited ? { rateLimit: { limit: 100_000, periodMs: 1000 } } : {});
  runs.push({ sandbox, sync });
  const started = Date.now();
  const first = await runStreams(sync.ctx, selectStreams());
  expect(first.failed).toBe(0);
  expect(summarizeDivergence(await divergence(sync.warehouse, sandbox.data, 'acme'))).toEqual({});
  const timings: Record<string, number> = { backfillMs: Date.now() - started };
  let compared = 0;
  const happened: Record<string, number> = {};
  for (let step = 0; step < steps; step++) {
    const changes = sandbox.data.advance(stepHours);
    const stepStarted = Date.now();
    const cycle = await runStreams(sync.ctx, selectStreams());
    expect(cycle.streams.filter((s) => s.outcome !== 'ok')).toEqual([]);
    await runStreams(sync.ctx, selectStreams(['pending-certifications', 'required-certification-status']));
    const due = dueForComparison(stepHours, cycle.streams);
    const spans = spansWithinBound(stepHours, cycle.streams, sandbox.data.now());
    const d = await divergence(sync.warehouse, sandbox.data, 'acme', spans);
    const bad = summarizeDivergence(
      Object.fromEntries(Object.entries(d).filter(([name]) => due.has(name) || name in spans)),
    );
    expect({ step, bad }).toEqual({ step, bad: {} });
    for (const [kind, n] of Object.entries(changes.counts)) happened[kind] = (happened[kind] ?? 0) + n;
    timings[`step${step}Ms`] = Date.now() - stepStarted;
    compared += due.size;
  }
  console.info(JSON.stringify({ size, steps, stepHours, ...timings, totalMs: Date.now() - started, happened }));
  // Every kind of change the sandbox makes happened in the thirty days.
  expect(
    Object.entries(happened)
      .filter(([, n]) => n === 0)
      .map(([kind]) => kind),
  ).toEqual([]);
  // Every stream was compared at least once after its bound.
  expect(compared).toBeGreaterThanOrEqual(streams.length);
}

describe('thirty days of changes converge within each table’s bound', () => {
  it(`${SIZE}: five steps of six days`, { timeout: 3_600_000 }, async () => {
    await converge(SIZE, 5, 144);
  });
});
