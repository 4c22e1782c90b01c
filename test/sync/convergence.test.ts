import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { SourceClient } from '../../src/source/client.ts';
import { createRateLimiter } from '../../src/ratelimit/index.ts';
import type { RateLimiter } from '../../src/ratelimit/types.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import type { SyncContext } from '../../src/sync/context.ts';
import { runStreams, selectStreams, type SyncSummary } from '../../src/sync/runner.ts';
import { freshDatabase } from '../support/db.ts';
import { divergence, spansWithinBound, summarizeDivergence, withinBounds } from '../support/convergence.ts';
import { clockProbe } from '../../src/resources/index.ts';

const rateLimit = { limit: 100, periodMs: 1000 };
let sandbox: RunningSandbox;
let wh: Warehouse;
let limiter: RateLimiter;
let client: SourceClient;
let ctx: SyncContext;
let first: SyncSummary;

async function snapshotOfContent(): Promise<Record<string, string[]>> {
  const tables = await wh.sql<{ table_name: string }[]>`
    select table_name from information_schema.columns
    where table_schema = ${wh.schema} and column_name = '_hash' and table_name not like '%_history'
    order by table_name`;
  const out: Record<string, string[]> = {};
  for (const { table_name } of tables) {
    const rows = await wh.sql.unsafe(`select _hash, _deleted_at from "${wh.schema}"."${table_name}" order by _hash`);
    out[table_name] = rows.map((r) => `${r._hash}|${r._deleted_at ? 'deleted' : ''}`);
  }
  for (const history of ['individuals_history', 'individual_certifications_history']) {
    const [n] = await wh.sql.unsafe(`select count(*)::int as n from "${wh.schema}"."${history}"`);
    out[history] = [String(n!.n)];
  }
  return out;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 5, size: 'small', rateLimit });
  wh = await openWarehouse({ databaseUrl: await freshDatabase() });
  await wh.migrate();
  limiter = createRateLimiter({ rateLimit });
  client = new SourceClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, limiter });
  ctx = {
    companyKey: 'acme',
    client,
    warehouse: wh,
    log: pino({ level: 'silent' }),
    now: () => client.serviceNow(),
    // The sandbox's clock jumps a day at a time, so ask it every run.
    refreshClock: () => client.freshServiceNow(clockProbe, 0),
    formIds: sandbox.data.formIds(),
    runTypeIds: sandbox.data.runTypeIds(),
  };
});

afterAll(async () => {
  await client?.close();
  await limiter?.close();
  await wh?.close();
  await sandbox?.close();
});

describe('sync converges on the service', () => {
  it('a full sync of a small company makes every table equal to the service, row for row', {
    timeout: 180_000,
  }, async () => {
    first = await runStreams(ctx, selectStreams());
    expect(first.streams.filter((s) => s.outcome !== 'ok')).toEqual([]);
    expect(first.rejects).toBe(0);
    expect(summarizeDivergence(await divergence(wh, sandbox.data, 'acme'))).toEqual({});
  });

  it('after a day of changes, an incremental sync converges again with far fewer requests', {
    timeout: 180_000,
  }, async () => {
    const changes = sandbox.data.advance(24);
    expect(Object.values(changes.counts).reduce((a, b) => a + b, 0)).toBeGreaterThan(50);
    const before = summarizeDivergence(await divergence(wh, sandbox.data, 'acme'));
    expect(Object.keys(before).length).toBeGreaterThan(3);

    const incremental = await runStreams(ctx, selectStreams());
    expect(incremental.streams.filter((s) => s.outcome !== 'ok')).toEqual([]);
    // A snapshot row is gone once two complete reads miss it: its bound is the next read.
    await runStreams(ctx, selectStreams(['pending-certifications', 'required-certification-status']));
    // Shift assignments and time off are compared within the span their daily re-read keeps (14 days back to 90
    // ahead; 120 back to 400 ahead); what only a weekly re-read brings is compared by the thirty-day test.
    const spans = spansWithinBound(24, incremental.streams, sandbox.data.now());
    expect(Object.keys(spans).sort()).toEqual(['shift-assignments', 'time-off-requests']);
    const d = withinBounds(await divergence(wh, sandbox.data, 'acme', spans), 24, incremental.streams, spans);
    expect(d['shift-assignments']!.expected).toBeGreaterThan(1000);
    expect(summarizeDivergence(d)).toEqual({});

    const perStream = Object.fromEntries(incremental.streams.map((s) => [s.stream, s.requests]));
    console.info(
      JSON.stringify({
        incrementalRequests: incremental.requests,
        fullRequests: first.requests,
        perStream,
        changes: changes.counts,
      }),
    );
    const full = Object.fromEntries(first.streams.map((s) => [s.stream, s.requests]));
    // A day later the daily complete re-read of 14 days back to 90 ahead is due: about a fifth of the backfill's span.
    // The first run after a backfill also reads the days named by the changes of the hour before the backfill
    // began once more: the backfill ran beside the changes' own, and those changes may have been saved after it
    // read their days.
    expect(incremental.streams.find((s) => s.stream === 'shift-assignments')!.rereads).toEqual(['recent-and-ahead']);
    expect(perStream['shift-assignments']).toBeLessThan(full['shift-assignments']! * 0.6);
    expect(perStream['individual-certifications']).toBeLessThan(full['individual-certifications']!);
    expect(perStream['form-audit']).toBeLessThan(full['form-audit']! / 3);
    expect(incremental.requests).toBeLessThan(first.requests / 2);
  });

  it('a second run with no changes writes nothing', async () => {
    const before = await snapshotOfContent();
    const again = await runStreams(ctx, selectStreams());
    expect(again.streams.filter((s) => s.outcome !== 'ok')).toEqual([]);
    expect(await snapshotOfContent()).toEqual(before);
  });

  it('records every stream run with its requests, rows and outcome', async () => {
    const runs =
      await wh.sql`select stream, outcome, requests, rows from ${wh.sql(wh.schema)}.sync_runs where company_key = 'acme'`;
    expect(runs.length).toBe(3 * selectStreams().length + 2);
    expect(runs.every((r) => r.outcome === 'ok')).toBe(true);
    // The overlap of append streams reads the last hour again: what it absorbed is counted, to check its length.
    const [overlap] = await wh.sql<{ duplicates: number }[]>`
      select sum((details->>'duplicates')::int)::int as duplicates from ${wh.sql(wh.schema)}.sync_runs
      where company_key = 'acme' and stream in ('assignment-changes', 'form-audit')`;
    expect(overlap!.duplicates).toBeGreaterThan(0);
    const checkpoints =
      await wh.sql`select stream, partition from ${wh.sql(wh.schema)}.sync_state where company_key = 'acme'`;
    expect(checkpoints.map((c) => c.stream)).toEqual(
      expect.arrayContaining([
        'individual-certifications',
        'shift-assignments',
        'assignment-changes',
        'form-responses',
        'form-audit',
      ]),
    );
  });
});
