import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams, type SyncSummary } from '../../src/sync/runner.ts';
import { readCheckpoint } from '../../src/warehouse/state.ts';
import { ChangeCursor } from '../../src/sync/cursors.ts';
import { divergence, summarizeDivergence } from '../support/convergence.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * Individual certifications read the individuals the warehouse holds, and the individuals job reads them too: a
 * stream is read by one run at a time, and a dependency read recently enough is not read again.
 *
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
  return Object.fromEntries(
    rows.map((r) => [r.stream, { started: new Date(r.started_at), finished: new Date(r.finished_at) }]),
  );
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
    expect(runs['shift-assignments']!.started.getTime()).toBeGreaterThanOrEqual(
      runs['assignment-changes']!.finished.getTime(),
    );
    const schema = sync.warehouse.sql(sync.warehouse.schema);
    const { changesFrom } = ChangeCursor.parse(await readCheckpoint(sync.warehouse, 'acme', 'shift-assignments', '-'));
    const [starts] = await sync.warehouse.sql<{ all: number; recent: number }[]>`
      select count(distinct start_date_time)::int as all,
             count(distinct start_date_time) filter (where event_time_stamp >= ${new Date(changesFrom!)})::int as recent
      from ${schema}.assignment_changes`;
    // The clocked-in list, the horizon, and the starts the changes of the last hour name: not one read per changed start.
    expect(starts!.all).toBeGreaterThan(50);
    expect(starts!.recent).toBeLessThan(starts!.all / 4);
    expect(summary.streams.find((s) => s.stream === 'shift-assignments')!.requests).toBeLessThanOrEqual(
      starts!.recent + 2,
    );
  });
});

const credentialsJob = () => selectStreams(['individual-certifications']);
const individualsJob = () => selectStreams(['individuals', 'supervisors']);
const individualsRequests = () => sandbox.stats().byEndpoint.individuals ?? 0;
const outcomeOf = (summary: SyncSummary, stream: string) => summary.streams.find((s) => s.stream === stream)!;

/** The runs of `individuals` that started since `since`, in order. */
async function individualsRuns(since: Date) {
  return sync.warehouse.sql<{ started_at: Date; finished_at: Date; outcome: string }[]>`
    select started_at, finished_at, outcome from ${sync.warehouse.sql(sync.warehouse.schema)}.sync_runs
    where company_key = 'acme' and stream = 'individuals' and started_at >= ${since} order by started_at`;
}

describe('a stream two jobs read', () => {
  it('a dependency read within its own job’s interval is not read again; past it, it is', async () => {
    await runStreams(sync.ctx, individualsJob());
    const before = individualsRequests();
    const fresh = await runStreams(sync.ctx, credentialsJob(), {
      freshness: { firedAt: new Date(), dependencyBoundsMs: { individuals: 60_000 } },
    });
    expect(outcomeOf(fresh, 'individuals')).toMatchObject({ outcome: 'ok', requests: 0 });
    expect(outcomeOf(fresh, 'individuals').freshFrom).toBeDefined();
    expect(outcomeOf(fresh, 'individual-certifications').outcome).toBe('ok');
    expect(individualsRequests()).toBe(before);

    await new Promise((r) => setTimeout(r, 50));
    const stale = await runStreams(sync.ctx, credentialsJob(), {
      freshness: { firedAt: new Date(), dependencyBoundsMs: { individuals: 20 } },
    });
    expect(outcomeOf(stale, 'individuals').freshFrom).toBeUndefined();
    expect(individualsRequests()).toBe(before + 1);
  });

  it('fired together, one job reads individuals and the other waits for it and takes its result', async () => {
    const firedAt = new Date();
    const before = individualsRequests();
    const freshness = { firedAt, dependencyBoundsMs: { individuals: 0 } };
    const [a, b] = await Promise.all([
      runStreams(sync.ctx, credentialsJob(), { freshness }),
      runStreams(sync.ctx, individualsJob(), { freshness: { firedAt } }),
    ]);
    expect(individualsRequests()).toBe(before + 1);
    expect([outcomeOf(a, 'individuals'), outcomeOf(b, 'individuals')].filter((o) => o.freshFrom)).toHaveLength(1);
    expect((await individualsRuns(firedAt)).map((r) => r.outcome)).toEqual(['ok']);
  });

  it('run by hand twice at once, the stream is read twice, one run after the other', async () => {
    const since = new Date();
    await Promise.all([runStreams(sync.ctx, credentialsJob()), runStreams(sync.ctx, individualsJob())]);
    const runs = await individualsRuns(since);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.started_at.getTime()).toBeGreaterThanOrEqual(runs[0]!.finished_at.getTime());
  });
});
