import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { pruneRuns } from '../../src/warehouse/retention.ts';
import { finishRun, openRun } from '../../src/warehouse/runs.ts';
import { readUsage } from '../../src/warehouse/usage.ts';
import { freshDatabase } from '../support/db.ts';

/** Requests per day per company and stream: added as runs end, and kept when the runs are pruned. */

let wh: Warehouse;

beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
});

afterAll(async () => {
  await wh?.close();
});

const run = async (company: string, stream: string, requests: number) => {
  const id = await openRun(wh, { companyKey: company, stream });
  await finishRun(wh, { companyKey: company, id }, { outcome: 'ok', requests });
  return id;
};

describe('usage_daily', () => {
  it('adds each run to its day, company and stream, and keeps the counts once its runs are pruned', async () => {
    await run('acme', 'individuals', 12);
    await run('acme', 'individuals', 30);
    await run('acme', 'departments', 1);
    await run('beta', 'individuals', 5);
    const today = new Date().toISOString().slice(0, 10);
    expect(await readUsage(wh, { company: 'acme', since: today })).toEqual([
      { company: 'acme', stream: 'departments', day: today, requests: 1, runs: 1 },
      { company: 'acme', stream: 'individuals', day: today, requests: 42, runs: 2 },
    ]);
    // Runs 40 days old, pruned by a 30-day retention: what they sent is still counted.
    await wh.sql`update ${wh.sql(wh.schema)}.sync_runs set finished_at = now() - interval '40 days', started_at = now() - interval '40 days' where company_key = 'acme' and stream = 'individuals'`;
    await run('acme', 'individuals', 3);
    expect(await pruneRuns(wh, 'acme', 30)).toBe(2);
    const after = await readUsage(wh, { company: 'acme', since: today });
    expect(after.find((u) => u.stream === 'individuals')).toEqual({
      company: 'acme',
      stream: 'individuals',
      day: today,
      requests: 45,
      runs: 3,
    });
    expect((await readUsage(wh, { since: today })).map((u) => u.company)).toEqual(['acme', 'acme', 'beta']);
  });
});
