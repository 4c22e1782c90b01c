import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { readCheckpoint } from '../../src/warehouse/index.ts';
import { ChangeCursor } from '../../src/sync/cursors.ts';
import { divergence, summarizeDivergence } from '../support/convergence.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * Shift assignments read the assignment changes the warehouse holds, so an incremental run waits for them. Their
 * backfill reads every day itself: it runs beside the changes' backfill, and the changes that backfill writes are
 * not applied again.
 */

let sandbox: RunningSandbox;
let sync: TestSync;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 6, size: 'tiny', rateLimit: null });
  sync = await openTestSync(sandbox);
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

/** When the last run of each stream started and finished. */
async function lastRuns(): Promise<Record<string, { started: Date; finished: Date }>> {
  const rows = await sync.warehouse.sql<{ stream: string; started_at: Date; finished_at: Date }[]>`
    select distinct on (stream) stream, started_at, finished_at from ${sync.warehouse.sql(sync.warehouse.schema)}.sync_runs
    where company_key = 'acme' order by stream, started_at desc`;
  return Object.fromEntries(rows.map((r) => [r.stream, { started: new Date(r.started_at), finished: new Date(r.finished_at) }]));
}

describe('a change-driven stream and the changes it reads', () => {
  it('backfill: shift assignments start before the assignment changes have finished', async () => {
    const summary = await runStreams(sync.ctx, selectStreams(['shift-assignments']));
    expect(summary.streams.map((s) => [s.stream, s.outcome])).toEqual([
      ['assignment-changes', 'ok'],
      ['shift-assignments', 'ok'],
    ]);
    const runs = await lastRuns();
    expect(runs['shift-assignments']!.started.getTime()).toBeLessThan(runs['assignment-changes']!.finished.getTime());
    const diff = summarizeDivergence(await divergence(sync.warehouse, sandbox.data, 'acme'));
    expect(diff['shift-assignments']).toBeUndefined();
    expect(diff['assignment-changes']).toBeUndefined();
    const cursor = ChangeCursor.parse(await readCheckpoint(sync.warehouse, 'acme', 'shift-assignments', '-'));
    // The changes stamped from an hour (the changes' overlap) before the backfill began are applied next time.
    expect(cursor.changesFrom).toBeDefined();
    expect(Date.parse(cursor.horizon!) - Date.parse(cursor.changesFrom!)).toBeGreaterThan(60 * 60_000);
  });

  it('the next run waits for the changes, and does not read again the days the backfilled changes name', async () => {
    const summary = await runStreams(sync.ctx, selectStreams(['shift-assignments']));
    expect(summary.streams.every((s) => s.outcome === 'ok')).toBe(true);
    const runs = await lastRuns();
    expect(runs['shift-assignments']!.started.getTime()).toBeGreaterThanOrEqual(runs['assignment-changes']!.finished.getTime());
    const schema = sync.warehouse.sql(sync.warehouse.schema);
    const { changesFrom } = ChangeCursor.parse(await readCheckpoint(sync.warehouse, 'acme', 'shift-assignments', '-'));
    const [starts] = await sync.warehouse.sql<{ all: number; recent: number }[]>`
      select count(distinct start_date_time)::int as all,
             count(distinct start_date_time) filter (where event_time_stamp >= ${new Date(changesFrom!)})::int as recent
      from ${schema}.assignment_changes`;
    // The clocked-in list, the horizon, and the starts the changes of the last hour name: not one read per changed start.
    expect(starts!.all).toBeGreaterThan(50);
    expect(starts!.recent).toBeLessThan(starts!.all / 4);
    expect(summary.streams.find((s) => s.stream === 'shift-assignments')!.requests).toBeLessThanOrEqual(starts!.recent + 2);
  });
});
