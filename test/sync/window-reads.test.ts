import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { divergence, summarizeDivergence } from '../support/convergence.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * The service includes both bounds of a date range, and the sync reads a span in windows side by side. A record
 * stamped on the bound between two windows (the sandbox's clock is on the hour, as shifts start) is read once.
 */

let sandbox: RunningSandbox;
let sync: TestSync;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 21, size: 'tiny', rateLimit: null });
  sync = await openTestSync(sandbox);
  // Windows are cut from the signpost: taken on the service's own round instant, their bounds fall on the hour.
  const at = sandbox.data.now();
  expect(at.getUTCMinutes() * 60_000 + at.getUTCSeconds() * 1000 + at.getUTCMilliseconds()).toBe(0);
  sync.ctx.now = () => at;
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

describe('windows side by side', () => {
  it('read a record on the bound between two of them once: a backfill reads as many rows as it stores', async () => {
    const names = ['shift-assignments', 'assignment-changes', 'form-audit'];
    const summary = await runStreams(sync.ctx, selectStreams(names));
    const { sql, schema } = sync.warehouse;
    const stored = async (table: string) =>
      (await sql<{ n: number }[]>`select count(*)::int as n from ${sql(schema)}.${sql(table)}`)[0]!.n;
    const read = Object.fromEntries(summary.streams.map((s) => [s.stream, s.rows]));
    expect(read).toEqual({
      'shift-assignments': await stored('shift_assignments'),
      'assignment-changes': await stored('assignment_changes'),
      'form-audit': await stored('form_audit'),
    });
    const off = summarizeDivergence(await divergence(sync.warehouse, sandbox.data, 'acme'));
    expect(Object.keys(off).filter((s) => names.includes(s))).toEqual([]);
  });
});
